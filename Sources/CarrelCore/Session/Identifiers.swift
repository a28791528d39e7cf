/// Identifies one `carrel_assessment_session_v1` object across Core decisions,
/// without holding a pointer. The compositor hands out a fresh value for every
/// `begin` request and never reuses one while the Invigilator still knows it.
public struct SessionID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public static func < (a: SessionID, b: SessionID) -> Bool { a.raw < b.raw }
    public var description: String { "session \(raw)" }
}

/// Identifies one Wayland client connection across Core decisions. A session
/// belongs to the client that sent `begin`; disconnecting ends its sessions.
public struct ClientID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public static func < (a: ClientID, b: ClientID) -> Bool { a.raw < b.raw }
    public var description: String { "client \(raw)" }
}
