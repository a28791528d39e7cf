/// A reason enum of the protocol: each has the catch-all `other` = 0, and
/// each entry was added in some version of the interface.
///
/// The protocol's rule, for both directions: a compositor sends `other` in
/// place of a reason newer than the version the client bound, and a client
/// reads a value it does not know as `other`.
///
/// ```swift
/// FailureReason.preconditionsUnmet.wireValue(forVersion: 1)   // 0 (other)
/// FailureReason(wireValue: 42)                                // .other
/// ```
public protocol WireReason: RawRepresentable, CaseIterable where RawValue == UInt32 {
    /// The catch-all entry, value 0.
    static var other: Self { get }
    /// The interface version that introduced the entry.
    var since: UInt32 { get }
}

extension WireReason {
    /// The reason a client that bound `version` may receive: itself if the
    /// client knows it, otherwise `other`.
    public func reason(forVersion version: UInt32) -> Self {
        since <= version ? self : .other
    }

    /// The value to put on the wire for a client that bound `version`.
    public func wireValue(forVersion version: UInt32) -> UInt32 {
        reason(forVersion: version).rawValue
    }

    /// The reason a received value names; values this side does not know
    /// (reasons of later versions) are `other`.
    public init(wireValue: UInt32) {
        self = Self(rawValue: wireValue) ?? .other
    }
}
