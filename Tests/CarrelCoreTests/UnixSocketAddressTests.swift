import CarrelCore
import CarrelSystem
import Glibc
import Testing

@Suite("Unix socket addresses")
struct UnixSocketAddressTests {
    @Test("a path up to 107 bytes fits and is NUL-terminated; one byte more does not")
    func length() {
        #expect(UnixSocketAddress.maximumPathLength == 107)
        let longest = "/" + String(repeating: "x", count: 106)
        let address = UnixSocketAddress(path: longest)
        #expect(address != nil)
        #expect(UnixSocketAddress(path: longest + "x") == nil)
        let decoded = address?.withSockaddr { pointer, size in
            pointer.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { un in
                (Int(un.pointee.sun_family), withUnsafeBytes(of: un.pointee.sun_path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }, Int(size))
            }
        }
        #expect(decoded?.0 == Int(AF_UNIX) && decoded?.1 == longest && decoded?.2 == MemoryLayout<sockaddr_un>.size)
    }
}
