import CarrelAudit
import Foundation
import Testing

/// File digests: what signed statements name for Carrel's executable and policy.
@Suite("File digests")
struct DigestTests {
    // FIPS 180-2's test vectors, not computed here.
    static let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let millionA = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

    func write(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "carrel-digest-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a file's digest is the SHA-256 of its bytes, over many reads (a million bytes)")
    func fileAtPath() throws {
        let small = try write(Array("abc".utf8))
        let large = try write([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        defer {
            try? FileManager.default.removeItem(atPath: small)
            try? FileManager.default.removeItem(atPath: large)
        }
        #expect(Digest.sha256Hex(fileAt: small) == Self.abc)
        #expect(Digest.sha256Hex(fileAt: large) == Self.millionA)
        #expect(Digest.sha256Hex(fileAt: small + ".absent") == nil)
    }

    @Test("an open file is hashed from its first byte, wherever its offset stands")
    func openFile() throws {
        let large = try write([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
        defer { try? FileManager.default.removeItem(atPath: large) }
        let fd = open(large, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(lseek(fd, 123_457, SEEK_SET) == 123_457)
        #expect(Digest.sha256Hex(fileDescriptor: fd) == Self.millionA)
        #expect(Digest.sha256Hex(fileDescriptor: -1) == nil)
    }
}
