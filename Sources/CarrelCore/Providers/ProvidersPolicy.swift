/// `[providers]`: restrictions beyond the display. All off by default.
public struct ProvidersPolicy: Sendable, Equatable {
    /// `network = true`: during a session only the app (and participants whose
    /// entry allows network) can open connections (nftables, cgroup v2).
    public var network: Bool
    /// `media = true`: MPRIS players on the session bus are paused at began
    /// and again whenever one starts playing during the session.
    public var media: Bool
    /// `state_directory`: where Carrel records which providers hold, before
    /// applying them, so the next start reverts what a crash left behind.
    /// nil: `$XDG_RUNTIME_DIR/carrel`.
    public var stateDirectory: String?
    /// `verify_interval_ms`: how often the applied providers are verified.
    public var verifyInterval: Duration
    /// `network_exempt_units`: the seat's own services (systemd units, `*`
    /// allowed) that keep the network during a session
    /// (`InfrastructureExemption`). None by default.
    public var networkExemptUnits: [String] = []

    public init(network: Bool = false, media: Bool = false, stateDirectory: String? = nil,
                verifyInterval: Duration = .seconds(1)) {
        self.network = network
        self.media = media
        self.stateDirectory = stateDirectory
        self.verifyInterval = verifyInterval
    }

    /// The enabled providers in the order they are applied (reverted in the
    /// reverse order): the network first, so nothing leaks while media pauses.
    public var enabledNames: [String] {
        var names: [String] = []
        if network { names.append(ProvidersPolicy.network) }
        if media { names.append(ProvidersPolicy.media) }
        return names
    }

    public static let network = "network"
    public static let media = "media"
    public static let knownNames = [network, media]

    /// Enables the provider `name`; false if Carrel has no provider by that name.
    public mutating func enable(_ name: String) -> Bool {
        switch name {
        case Self.network: network = true
        case Self.media: media = true
        default: return false
        }
        return true
    }

    /// The verify period in whole milliseconds (at least 1), for a timer.
    public var verifyIntervalMilliseconds: Int32 {
        Int32(clamping: max(1, verifyInterval.wholeMilliseconds))
    }
}
