/// The state file: which providers may hold, recorded before each is
/// applied and removed once all are reverted, so a Carrel that crashed
/// leaves the next start enough to undo what it put up.
///
/// ```text
/// carrel-providers 1
/// network<TAB>carrel-4711
/// media<TAB>
/// ```
public struct ProviderState: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        /// The provider's `recoveryToken` at the time it was recorded.
        public var token: String
        public init(name: String, token: String) {
            self.name = name
            self.token = token
        }
    }

    /// In the order they were applied.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    static let header = "carrel-providers 1"

    /// The file's text.
    public var encoded: String {
        ([Self.header] + entries.map { "\($0.name)\t\($0.token)" }).joined(separator: "\n") + "\n"
    }

    /// Parses a state file; nil when it is not one this version wrote.
    public init?(decoding text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard lines.first == Substring(Self.header) else { return nil }
        lines.removeFirst()
        var entries: [Entry] = []
        for line in lines {
            let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(fields[0])
            guard !name.isEmpty, !name.contains(" ") else { return nil }
            entries.append(Entry(name: name, token: fields.count > 1 ? String(fields[1]) : ""))
        }
        self.entries = entries
    }
}

/// What to do at start about a state file a previous run left.
public enum ProviderRecoveryPlan: Sendable, Equatable {
    /// No file, or one that records nothing: nothing holds.
    case nothing
    /// Revert these, in this order (the reverse of how they were applied).
    case revert([ProviderState.Entry])
    /// The file is unreadable or garbled: revert every provider Carrel knows,
    /// with empty tokens, since a crash must not leave a machine restricted
    /// by accident. `reason` is logged.
    case revertAllKnown(reason: String)

    /// The plan for the state file's text (nil: there is no file). Entries
    /// naming a provider this Carrel does not know are reverted by none; the
    /// caller logs them (`unknownNames`).
    public static func plan(recorded text: String?, known: [String] = ProvidersPolicy.knownNames) -> ProviderRecoveryPlan {
        guard let text else { return .nothing }
        guard let state = ProviderState(decoding: text) else {
            return .revertAllKnown(reason: "the state file is not one Carrel wrote")
        }
        if state.entries.isEmpty { return .nothing }
        // A provider recorded twice is reverted once, at its latest place.
        var seen = Set<String>()
        var order: [ProviderState.Entry] = []
        for entry in state.entries.reversed() where seen.insert(entry.name).inserted {
            order.append(entry)
        }
        return .revert(order)
    }
}
