import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// The live lockdown: carrel_assessment_manager_v1 on the app's own Wayland
/// connection.
///
/// ```swift
/// let lockdown = try WaylandAssessmentManager(display: display, surface: examWindowSurface)
/// if lockdown.features[.spellCheck] == .client { turnOffOwnSpellChecker() }
/// let session = AssessmentSession(configuration: AssessmentConfiguration(), manager: lockdown)
/// session.delegate = self
/// session.begin()
/// while wl_display_dispatch(display) >= 0 { }   // delegate callbacks happen in here
/// lockdown.connectionDidFail()                   // tell sessions the connection is gone
/// ```
///
/// Threading: the manager and its sessions belong to the thread that
/// dispatches the display's default queue. Every event is delivered from
/// within that thread's `wl_display_dispatch` (or `_pending`/`roundtrip`);
/// the constructor alone dispatches, on a private queue, so it never runs the
/// app's own handlers.
///
/// Lifetime: release sessions and the manager before `wl_display_disconnect`.
/// `surface` must stay alive while sessions are begun with it; destroying the
/// window later does not end a session.
public final class WaylandAssessmentManager: AssessmentManaging {
    public static let interfaceName = AssessmentProtocol.managerInterface

    /// The app's connection (`struct wl_display *`).
    public let display: OpaquePointer
    /// The exam window's `wl_surface`, which must have the xdg_toplevel role
    /// and be mapped (have a buffer committed) before `begin()`.
    public let surface: OpaquePointer
    public private(set) var features: [AssessmentFeature: AssessmentEnforcement] = [:]
    public private(set) var lockState: AssessmentLockState = .inactive
    /// The protocol version bound: this build's `AssessmentProtocol.version`,
    /// or less when the compositor offers less. Reasons of later versions
    /// arrive as `other`.
    public let version: UInt32
    /// ``version``, as ``AssessmentManaging`` asks for it.
    public var protocolVersion: UInt32? { version }
    /// Called (from within dispatch) when another `lock_state` … `done` group changes the lock state.
    public var onLockStateChange: ((AssessmentLockState) -> Void)?

    private let manager: OpaquePointer
    /// Manager events apply only once `done` arrives.
    private var announcedFeatures: [AssessmentFeature: AssessmentEnforcement] = [:]
    private var announcedLockState: AssessmentLockState?
    private var sessionProxies: [AssessmentSession.ID: SessionProxy] = [:]

    /// Binds the assessment global and waits for its first `done`, so
    /// `features` and `lockState` are known on return.
    ///
    /// - Throws: ``AssessmentError`` `notAvailable` when the compositor does not
    ///   offer the global to this app (not Carrel, or not launched as its exam
    ///   app), `connection` when the connection fails.
    public init(display: OpaquePointer, surface: OpaquePointer) throws {
        self.display = display
        self.surface = surface

        // A private queue, so these roundtrips dispatch only our own events.
        guard let queue = wl_display_create_queue(display) else {
            throw Self.connectionError(display, doing: "creating an event queue")
        }
        defer { wl_event_queue_destroy(queue) }
        let wrapper = wl_proxy_create_wrapper(UnsafeMutableRawPointer(display))
        wl_proxy_set_queue(OpaquePointer(wrapper), queue)
        let registry = wl_display_get_registry(OpaquePointer(wrapper))
        wl_proxy_wrapper_destroy(wrapper)
        defer { wl_registry_destroy(registry) }

        let finder = GlobalFinder()
        wl_registry_add_listener(registry, globalFinderListener, Unmanaged.passUnretained(finder).toOpaque())
        guard wl_display_roundtrip_queue(display, queue) >= 0 else {
            throw Self.connectionError(display, doing: "listing the compositor's globals")
        }
        guard let name = finder.name, let offered = finder.version,
              let interface = carrel_client_interface(Self.interfaceName) else {
            throw AssessmentError(
                .notAvailable,
                message: "the compositor does not offer \(Self.interfaceName) to this app; "
                    + "run the app inside Carrel as its exam app (carrel -- APP)")
        }
        // The new proxy inherits the registry's private queue.
        version = min(offered, AssessmentProtocol.version)
        manager = OpaquePointer(wl_registry_bind(registry, name, interface, version))

        carrel_assessment_manager_v1_add_listener(manager, managerListener, Unmanaged.passUnretained(self).toOpaque())
        // The compositor answers the bind with features, lock_state and done.
        let answered = wl_display_roundtrip_queue(display, queue) >= 0
        // From now on the manager (and the sessions it creates) use the
        // app's default queue, which outlives the private one; anything
        // already queued privately goes first.
        wl_proxy_set_queue(manager, nil)
        guard answered else {
            // deinit, which runs for a class whose init throws once every
            // property is set, destroys the manager proxy.
            throw Self.connectionError(display, doing: "reading the assessment features")
        }
        wl_display_dispatch_queue_pending(display, queue)
    }

    /// Connects the live lockdown that `AssessmentSession(configuration:)`
    /// uses (``AssessmentSession/defaultManager``): this manager on success,
    /// otherwise an ``UnavailableAssessmentManager`` carrying why, so the
    /// missing compositor reaches the app as *failed to begin*, never as a throw.
    @discardableResult
    public static func connectDefault(display: OpaquePointer, surface: OpaquePointer) -> any AssessmentManaging {
        let manager: any AssessmentManaging
        do {
            manager = try WaylandAssessmentManager(display: display, surface: surface)
        } catch let error as AssessmentError {
            manager = UnavailableAssessmentManager(error: error)
        } catch {
            manager = UnavailableAssessmentManager(error: AssessmentError(.other, message: "\(error)"))
        }
        AssessmentSession.defaultManager = manager
        return manager
    }

    /// The carrel-assessment-v1 version this build would bind from the
    /// compositor at `displayName` (nil: `WAYLAND_DISPLAY`), asked on a
    /// connection of its own that is closed before returning; nil when no
    /// compositor answers or none offers the global to this app.
    public static func offeredVersion(displayName: String?) -> UInt32? {
        guard let display = wl_display_connect(displayName) else { return nil }
        defer { wl_display_disconnect(display) }
        let registry = wl_display_get_registry(display)
        defer { wl_registry_destroy(registry) }
        let finder = GlobalFinder()
        wl_registry_add_listener(registry, globalFinderListener, Unmanaged.passUnretained(finder).toOpaque())
        guard wl_display_roundtrip(display) >= 0, let offered = finder.version else { return nil }
        return min(offered, AssessmentProtocol.version)
    }

    deinit {
        for proxy in sessionProxies.values { proxy.destroy() }
        // Destroying the manager does not end sessions; sessions hold the
        // manager, so none are left here anyway.
        carrel_assessment_manager_v1_destroy(manager)
    }

    /// Call when `wl_display_dispatch` (or flush) fails: the compositor has
    /// ended every session of this connection. Pending sessions hear failed
    /// (`connection`); active ones interrupted (`connection`), then ended.
    public func connectionDidFail() {
        let code = wl_display_get_error(display)
        let message = "the connection to the compositor failed: "
            + (code == 0 ? "unknown error" : String(cString: strerror(code)))
        for proxy in sessionProxies.values {
            proxy.session?.receive(.connectionLost(message))
        }
    }

    // MARK: AssessmentManaging

    public func begin(_ session: AssessmentSession) {
        let configuration = makeConfigurationObject(session.configuration)
        let proxy = SessionProxy(
            proxy: carrel_assessment_manager_v1_begin(manager, surface, configuration),
            session: session)
        // The compositor copied the configuration while handling begin.
        carrel_assessment_configuration_v1_destroy(configuration)
        carrel_assessment_session_v1_add_listener(proxy.proxy, sessionListener, Unmanaged.passUnretained(proxy).toOpaque())
        sessionProxies[session.id]?.destroy()
        sessionProxies[session.id] = proxy
        wl_display_flush(display)
    }

    public func end(_ session: AssessmentSession) {
        guard let proxy = sessionProxies[session.id] else { return }
        carrel_assessment_session_v1_end(proxy.proxy)
        wl_display_flush(display)
    }

    public func update(_ session: AssessmentSession, to configuration: AssessmentConfiguration) {
        guard let proxy = sessionProxies[session.id] else { return }
        let object = makeConfigurationObject(configuration)
        carrel_assessment_session_v1_update(proxy.proxy, object)
        carrel_assessment_configuration_v1_destroy(object)
        wl_display_flush(display)
    }

    public func requestAttestation(_ session: AssessmentSession, nonce: [UInt8]) {
        guard let proxy = sessionProxies[session.id] else { return }
        guard version >= AssessmentProtocol.attestationSince else {
            session.receive(.attestationFailed(AttestationError(
                .unavailable, message: "the compositor speaks version \(version) of \(Self.interfaceName); signed statements need version \(AssessmentProtocol.attestationSince)")))
            return
        }
        var array = wl_array()
        wl_array_init(&array)
        defer { wl_array_release(&array) }
        if !nonce.isEmpty, let slot = wl_array_add(&array, nonce.count) {
            nonce.withUnsafeBytes { slot.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        carrel_assessment_session_v1_request_attestation(proxy.proxy, &array)
        wl_display_flush(display)
    }

    public func release(_ id: AssessmentSession.ID) {
        guard let proxy = sessionProxies.removeValue(forKey: id) else { return }
        // destroy ends a pending or active session at once.
        proxy.destroy()
        wl_display_flush(display)
    }

    /// A configuration object carrying `configuration`, each setter used at
    /// most once as the protocol requires.
    private func makeConfigurationObject(_ configuration: AssessmentConfiguration) -> OpaquePointer {
        let object: OpaquePointer = carrel_assessment_manager_v1_create_configuration(manager)
        for feature in configuration.allowedFeatures.sorted(by: { $0.rawValue < $1.rawValue }) {
            carrel_assessment_configuration_v1_allow_feature(object, feature.rawValue)
        }
        for participant in configuration.distinctParticipants {
            carrel_assessment_configuration_v1_add_participant(object, participant)
        }
        // AssessmentSession checked that a denial needs no newer version than bound.
        for participant in configuration.networkDeniedParticipants {
            carrel_assessment_configuration_v1_deny_participant_network(object, participant)
        }
        if !configuration.mainParticipantConfiguration.allowsNetworkAccess {
            carrel_assessment_configuration_v1_deny_owner_network(object)
        }
        // AssessmentSession validated the limit before asking.
        if let seconds = (try? configuration.wireTimeLimit()) ?? nil {
            carrel_assessment_configuration_v1_set_time_limit(object, seconds)
        }
        return object
    }

    private static func connectionError(_ display: OpaquePointer, doing what: String) -> AssessmentError {
        let code = wl_display_get_error(display)
        let reason = code == 0 ? "unknown error" : String(cString: strerror(code))
        return AssessmentError(.connection, message: "the Wayland connection failed while \(what): \(reason)")
    }

    // MARK: Manager events

    fileprivate func handleFeature(_ value: UInt32, enforcement: UInt32) {
        // Features of later versions are not ours to configure; skip them.
        guard let feature = AssessmentFeature(rawValue: value) else { return }
        // An unknown enforcement is read as the client's job: the safe side.
        announcedFeatures[feature] = AssessmentFeature.Enforcement(rawValue: enforcement) ?? .client
    }

    fileprivate func handleLockState(_ value: UInt32) {
        // Any value but inactive means something holds the lock.
        announcedLockState = LockState(rawValue: value) ?? .active
    }

    fileprivate func handleDone() {
        if !announcedFeatures.isEmpty {
            features = announcedFeatures
            announcedFeatures = [:]
        }
        if let state = announcedLockState {
            announcedLockState = nil
            let changed = state != lockState
            lockState = state
            if changed { onLockStateChange?(state) }
        }
    }
}

/// One carrel_assessment_session_v1 proxy and the session it reports to.
private final class SessionProxy {
    let proxy: OpaquePointer
    weak var session: AssessmentSession?

    init(proxy: OpaquePointer, session: AssessmentSession) {
        self.proxy = proxy
        self.session = session
    }

    func destroy() {
        carrel_assessment_session_v1_destroy(proxy)
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> SessionProxy {
        Unmanaged<SessionProxy>.fromOpaque(data!).takeUnretainedValue()
    }
}

/// Notes the name of the assessment global while the registry lists globals.
private final class GlobalFinder {
    var name: UInt32?
    var version: UInt32?
}

private func text(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

/// Copies a listener to memory that is never freed: libwayland keeps the
/// pointer as long as a proxy lives, and these listeners are per-type constants.
private func permanent<Listener>(_ listener: Listener) -> UnsafePointer<Listener> {
    let storage = UnsafeMutablePointer<Listener>.allocate(capacity: 1)
    storage.initialize(to: listener)
    return UnsafePointer(storage)
}

private let globalFinderListener = permanent(wl_registry_listener(
    global: { data, _, name, interface, version in
        guard let interface, String(cString: interface) == WaylandAssessmentManager.interfaceName else { return }
        let finder = Unmanaged<GlobalFinder>.fromOpaque(data!).takeUnretainedValue()
        finder.name = name
        finder.version = version
    },
    global_remove: { _, _, _ in }
))

private func manager(_ data: UnsafeMutableRawPointer?) -> WaylandAssessmentManager {
    Unmanaged<WaylandAssessmentManager>.fromOpaque(data!).takeUnretainedValue()
}

private let managerListener = permanent(carrel_assessment_manager_v1_listener(
    feature: { data, _, feature, enforcement in manager(data).handleFeature(feature, enforcement: enforcement) },
    lock_state: { data, _, state in manager(data).handleLockState(state) },
    done: { data, _ in manager(data).handleDone() }
))

private let sessionListener = permanent(carrel_assessment_session_v1_listener(
    began: { data, _ in SessionProxy.from(data).session?.receive(.began) },
    failed: { data, _, reason, message in
        SessionProxy.from(data).session?.receive(.failed(AssessmentError(
            AssessmentError.Code(failureReason: reason), message: text(message))))
    },
    interrupted: { data, _, reason, message in
        SessionProxy.from(data).session?.receive(.interrupted(AssessmentError(
            AssessmentError.Code(interruptionReason: reason), message: text(message))))
    },
    ended: { data, _ in SessionProxy.from(data).session?.receive(.ended) },
    updated: { data, _ in SessionProxy.from(data).session?.receive(.updated) },
    update_failed: { data, _, reason, message in
        SessionProxy.from(data).session?.receive(.updateFailed(AssessmentError(
            AssessmentError.Code(failureReason: reason), message: text(message))))
    },
    attestation: { data, _, statement, signature in
        let bytes = signature.map { array in
            array.pointee.size == 0 ? [] : Array(UnsafeRawBufferPointer(start: array.pointee.data, count: array.pointee.size))
        } ?? []
        SessionProxy.from(data).session?.receive(.attestation(SessionAttestation(
            statement: Array(text(statement).utf8), signature: bytes)))
    },
    attestation_failed: { data, _, reason, message in
        SessionProxy.from(data).session?.receive(.attestationFailed(AttestationError(
            AttestationFailureReason(wireValue: reason), message: text(message))))
    }
))
