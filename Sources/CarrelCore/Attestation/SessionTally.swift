/// What happened during one session that its closing statement reports:
/// blocked attempts counted by kind (every attempt, including those the
/// audit log only summarised), and each interruption's reason.
public struct SessionTally: Sendable, Hashable {
    public private(set) var blocked: [String: UInt64] = [:]
    /// Interruption reasons in the order they happened.
    public private(set) var interruptions: [InterruptionReason] = []

    public init() {}

    public mutating func countBlocked(_ kind: String) {
        blocked[kind, default: 0] &+= 1
    }

    public mutating func noteInterruption(_ reason: InterruptionReason) {
        interruptions.append(reason)
    }

    /// Every kind the audit log knows, zero when none happened, plus any other
    /// kind seen: a verifier can tell "none" from "not reported".
    public var blockedByKind: [String: UInt64] {
        var all = blocked
        for kind in AuditKind.all where all[kind] == nil { all[kind] = 0 }
        return all
    }
}
