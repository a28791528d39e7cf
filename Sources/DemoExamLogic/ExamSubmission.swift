import CarrelWire
import AssessmentKit

/// Where `--submit-url` hands the answers in: a plain `http://HOST:PORT/PATH`
/// (the demo's exam server is on the local network or loopback; a real exam
/// app would use TLS). The nonce comes from `GET URL/nonce`, the answers go
/// to `POST URL`.
public struct SubmissionURL: Hashable, Sendable {
    public var host: String
    public var port: UInt16
    public var path: String

    public init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        let rest = text.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard !authority.isEmpty, parts.count <= 2, !parts[0].isEmpty else { return nil }
        host = String(parts[0])
        if parts.count == 2 {
            guard let port = UInt16(parts[1]), port > 0 else { return nil }
            self.port = port
        } else {
            port = 80
        }
        self.path = path.isEmpty ? "/" : String(path)
    }

    /// The path of the nonce endpoint.
    public var noncePath: String { path.hasSuffix("/") ? path + "nonce" : path + "/nonce" }
}

/// The body the demo posts: its answers and the session's signed statement
/// (or why there is none, so the server can refuse with a reason).
public enum ExamSubmission {
    /// `{"answers":{"1":"2",...},"attestation":{...}|null,"attestation_error":"..."|null}`.
    public static func json(answers: [Int: String], attestation: SessionAttestation?, error: AttestationError?) -> String {
        let pairs = answers.keys.sorted().map { "\"\($0)\":\(JSONString.quoted(answers[$0]!))" }
        let attestationJSON = attestation?.envelopeJSON ?? "null"
        let errorJSON = error.map { JSONString.quoted($0.description) } ?? "null"
        return "{\"answers\":{\(pairs.joined(separator: ","))},\"attestation\":\(attestationJSON),\"attestation_error\":\(errorJSON)}"
    }

    /// The nonce in a `GET URL/nonce` answer: hex text (surrounding blanks ignored), or nil.
    public static func nonce(fromResponse body: String) -> [UInt8]? {
        let hex = Array(body.trimmingCharacters(in: " \t\r\n").utf8)
        guard !hex.isEmpty, hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < hex.count {
            guard let high = digit(hex[index]), let low = digit(hex[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func digit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

}

extension StringProtocol {
    /// Without leading and trailing scalars of `set` (by scalar: "\r\n" is one Character but two blanks).
    func trimmingCharacters(in set: String) -> String {
        let blanks = Set(set.unicodeScalars)
        let scalars = Array(unicodeScalars)
        let start = scalars.firstIndex { !blanks.contains($0) } ?? scalars.endIndex
        let end = scalars.lastIndex { !blanks.contains($0) }.map { $0 + 1 } ?? start
        var out = String.UnicodeScalarView()
        if start < end { out.append(contentsOf: scalars[start..<end]) }
        return String(out)
    }
}
