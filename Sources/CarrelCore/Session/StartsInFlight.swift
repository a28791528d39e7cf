/// Programs asked of the privileged helper whose answer has not come yet
/// (participants, the on-screen keyboard): the compositor does not wait for
/// the answer, so a stop, or a wish to have it again, can come first. What
/// the answer then means is decided here: a program still wanted is kept,
/// one stopped meanwhile goes at once (it must not outlive what stopped it),
/// and an answer for nothing asked is not ours to keep.
public struct StartsInFlight<Key: Hashable & Sendable>: Sendable, Equatable {
    /// Each key asked for: whether it is still wanted.
    private var asked: [Key: Bool] = [:]

    public init() {}

    /// What an answer that started the program means.
    public enum Disposition: Sendable, Equatable {
        /// Still wanted: it runs.
        case keep
        /// Stopped while it was being started: it is stopped at once.
        case stopAtOnce
        /// Nothing was asked for this key (an answer after it was dropped).
        case unknown
    }

    /// `key` is asked for (not already in flight: see `isInFlight`).
    public mutating func ask(_ key: Key) { asked[key] = true }

    public func isInFlight(_ key: Key) -> Bool { asked[key] != nil }

    /// The keys in flight and still wanted (they count as running: a
    /// revert must stop them too).
    public var wanted: Set<Key> { Set(asked.filter(\.value).keys) }

    /// A stop for `key`: true when it was in flight (then its answer is
    /// what stops it), false when there was nothing in flight to stop.
    @discardableResult
    public mutating func stop(_ key: Key) -> Bool {
        guard asked[key] != nil else { return false }
        asked[key] = false
        return true
    }

    /// `key`, stopped while in flight, is wanted again before the answer
    /// came: the one coming is kept rather than a second one asked for.
    /// False when nothing is in flight for it (then it is to be asked for).
    public mutating func wantAgain(_ key: Key) -> Bool {
        guard asked[key] != nil else { return false }
        asked[key] = true
        return true
    }

    /// The helper answered for `key`: what a started program means now
    /// (and the key is no longer in flight).
    public mutating func answered(_ key: Key) -> Disposition {
        guard let stillWanted = asked.removeValue(forKey: key) else { return .unknown }
        return stillWanted ? .keep : .stopAtOnce
    }
}
