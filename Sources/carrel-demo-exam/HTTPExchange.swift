import DemoExamLogic
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// One blocking HTTP/1.0 request to the demo's exam server, bounded in
/// time: the demo hands in once, at the end, so a short wait on the main
/// thread is acceptable (the session's restrictions hold meanwhile).
enum HTTPExchange {
    static let timeoutMilliseconds: Int32 = 5000

    /// The status code and body, or what went wrong.
    static func perform(_ method: String, url: SubmissionURL, path: String, body: String? = nil) -> Result<(Int, String), DemoError> {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(url.host, String(url.port), &hints, &found) == 0, let address = found else {
            return .failure(DemoError("cannot resolve \(url.host)"))
        }
        defer { freeaddrinfo(found) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failure(DemoError("socket: \(errnoText())")) }
        defer { close(fd) }
        if connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) != 0 && errno != EINPROGRESS {
            return .failure(DemoError("cannot connect to \(url.host):\(url.port): \(errnoText())"))
        }
        guard wait(fd, for: Int16(POLLOUT)) else { return .failure(DemoError("\(url.host):\(url.port) did not accept within \(timeoutMilliseconds) ms")) }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { return .failure(DemoError("cannot connect to \(url.host):\(url.port): \(errnoText(error))")) }

        let payload = Array((body ?? "").utf8)
        var request = "\(method) \(path) HTTP/1.0\r\nHost: \(url.host):\(url.port)\r\nConnection: close\r\n"
        if body != nil { request += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        let bytes = Array((request + "\r\n").utf8) + payload
        var sent = 0
        while sent < bytes.count {
            guard wait(fd, for: Int16(POLLOUT)) else { return .failure(DemoError("sending to \(url.host) timed out")) }
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno != EAGAIN && errno != EINTR { return .failure(DemoError("sending: \(errnoText())")) }
            if n > 0 { sent += n }
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while response.count < 1 << 20 {
            guard wait(fd, for: Int16(POLLIN)) else { return .failure(DemoError("\(url.host) did not answer within \(timeoutMilliseconds) ms")) }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 { break }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return .failure(DemoError("receiving: \(errnoText())"))
            }
            response += chunk[..<n]
        }
        let separator = Array("\r\n\r\n".utf8)
        let headerEnd = response.indices.first { response[$0...].starts(with: separator) }
        let head = String(decoding: response[..<(headerEnd ?? response.endIndex)], as: UTF8.self)
        guard let headerEnd, let status = head.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            return .failure(DemoError("not an HTTP answer from \(url.host):\(url.port)"))
        }
        return .success((status, String(decoding: response[(headerEnd + separator.count)...], as: UTF8.self)))
    }

    private static func wait(_ fd: Int32, for events: Int16) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let n = poll(&entry, 1, timeoutMilliseconds)
            if n < 0 && errno == EINTR { continue }
            return n > 0
        }
    }
}
