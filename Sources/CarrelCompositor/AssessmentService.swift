import CarrelCore
import CarrelShim
import Glibc
import Logging

typealias WlResource = UnsafeMutablePointer<wl_resource>

/// The server side of carrel-assessment-v1: turns protocol requests into
/// Invigilator inputs and carries out the effects it returns. All decisions
/// (who may lock, what a session restricts, what to answer) are Core's.
final class AssessmentService {
    private unowned let server: Server
    private var invigilator: Invigilator
    private let logger: Logger
    private var global: OpaquePointer?
    /// Bound manager resources, to broadcast lock_state changes.
    private var managers: [ManagerObject] = []
    private var sessions: [SessionID: SessionObject] = [:]
    private var nextSessionID: UInt64 = 1
    private var presentationTimers: [SessionID: OpaquePointer] = [:]
    private var timeLimitTimers: [SessionID: OpaquePointer] = [:]
    private var confirmationTimers: [SessionID: OpaquePointer] = [:]
    private var bannerTimers: [SessionID: OpaquePointer] = [:]
    /// The session whose app-requested lock the prompt on screen asks about.
    private(set) var askingConfirmation: SessionID?
    /// Outputs that still have to present a frame with the restrictions up,
    /// for the session waiting to begin.
    private var presentationWait: (session: SessionID, outputs: Set<ObjectIdentifier>)?
    /// The session Carrel began itself (`--assessment`): it has no resource,
    /// its events go to the Server instead.
    private var onBehalfSession: SessionID?

    init(server: Server, policy: SessionPolicy, appLock: AppLockPolicy = AppLockPolicy(), logger: Logger) {
        self.server = server
        self.invigilator = Invigilator(policy: policy, appLock: appLock)
        self.logger = logger
        global = wl_global_create(server.display, Self.managerInterface, Int32(AssessmentProtocol.version),
                                  Unmanaged.passUnretained(self).toOpaque()) { client, data, version, id in
            Unmanaged<AssessmentService>.fromOpaque(data!).takeUnretainedValue()
                .bind(client: client!, version: version, id: id)
        }
    }

    static let managerInterface = carrel_assessment_manager_interface()!
    static let configurationInterface = carrel_assessment_configuration_interface()!
    static let sessionInterface = carrel_assessment_session_interface()!

    /// Request tables live for the whole process at a fixed address, as
    /// libwayland keeps pointers to them.
    private static func permanent<T>(_ value: T) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }

    var restrictionsInForce: RestrictionSet? { invigilator.restrictionsInForce }

    // MARK: - Manager

    private func bind(client: OpaquePointer, version: UInt32, id: UInt32) {
        guard let resource = wl_resource_create(client, Self.managerInterface, Int32(version), id) else {
            wl_client_post_no_memory(client)
            return
        }
        let manager = ManagerObject(resource: resource, service: self)
        managers.append(manager)
        wl_resource_set_implementation(resource, AssessmentService.managerImplementation,
                                       Unmanaged.passRetained(manager).toOpaque()) { resource in
            let manager = Unmanaged<ManagerObject>.fromOpaque(wl_resource_get_user_data(resource)!).takeRetainedValue()
            manager.service?.managers.removeAll { $0 === manager }
        }
        for announcement in invigilator.policy.announcements {
            carrel_assessment_manager_v1_send_feature(resource, announcement.feature.rawValue,
                                                      announcement.enforcement == .compositor ? 0 : 1)
        }
        carrel_assessment_manager_v1_send_lock_state(resource, invigilator.lockState == .active ? 1 : 0)
        carrel_assessment_manager_v1_send_done(resource)
    }

    private static let managerImplementation = permanent(carrel_assessment_manager_v1_interface(
        destroy: { _, resource in wl_resource_destroy(resource) },
        create_configuration: { client, resource, id in
            guard let manager = ManagerObject.from(resource) else { return }
            manager.service?.createConfiguration(client: client!, version: UInt32(wl_resource_get_version(resource)), id: id)
        },
        begin: { client, resource, id, surface, configuration in
            guard let manager = ManagerObject.from(resource) else { return }
            manager.service?.begin(client: client!, manager: resource!, id: id, surface: surface!,
                                   configuration: configuration.flatMap(ConfigurationObject.from))
        }
    ))

    // MARK: - Configuration

    private func createConfiguration(client: OpaquePointer, version: UInt32, id: UInt32) {
        guard let resource = wl_resource_create(client, Self.configurationInterface, Int32(version), id) else {
            wl_client_post_no_memory(client)
            return
        }
        let object = ConfigurationObject()
        wl_resource_set_implementation(resource, AssessmentService.configurationImplementation,
                                       Unmanaged.passRetained(object).toOpaque()) { resource in
            Unmanaged<ConfigurationObject>.fromOpaque(wl_resource_get_user_data(resource)!).release()
        }
    }

    private static let configurationImplementation = permanent(carrel_assessment_configuration_v1_interface(
        destroy: { _, resource in wl_resource_destroy(resource) },
        allow_feature: { _, resource, feature in
            ConfigurationObject.from(resource!)?.change(resource!) { (draft: inout ConfigurationDraft) throws(ConfigurationError) in try draft.allowFeature(wireValue: feature) }
        },
        add_participant: { _, resource, id in
            let participant = String(cString: id!)
            ConfigurationObject.from(resource!)?.change(resource!) { (draft: inout ConfigurationDraft) throws(ConfigurationError) in try draft.addParticipant(participant) }
        },
        set_time_limit: { _, resource, seconds in
            ConfigurationObject.from(resource!)?.change(resource!) { (draft: inout ConfigurationDraft) throws(ConfigurationError) in try draft.setTimeLimit(seconds: seconds) }
        }
    ))

    // MARK: - Session

    private func begin(client: OpaquePointer, manager: WlResource, id: UInt32, surface: WlResource,
                       configuration: ConfigurationObject?) {
        guard let resource = wl_resource_create(client, Self.sessionInterface, wl_resource_get_version(manager), id) else {
            wl_client_post_no_memory(client)
            return
        }
        let sessionID = SessionID(nextSessionID)
        nextSessionID += 1
        let object = SessionObject(id: sessionID, resource: resource, manager: manager, service: self)
        sessions[sessionID] = object
        wl_resource_set_implementation(resource, AssessmentService.sessionImplementation,
                                       Unmanaged.passRetained(object).toOpaque()) { resource in
            let object = Unmanaged<SessionObject>.fromOpaque(wl_resource_get_user_data(resource)!).takeRetainedValue()
            object.resource = nil
            object.service?.sessionResourceDestroyed(object)
        }
        let wlrSurface = wlr_surface_from_resource(surface)!
        let readiness = server.readiness(of: wlrSurface, client: client)
        let role = server.role(of: client)
        // Read when the client connected; Core matches it against the allowlist.
        let executable = role == .untrusted ? server.executable(of: client) : nil
        server.audit.record("begin", session: sessionID, subject: server.auditSubject(client),
                            detail: (configuration?.draft.configuration ?? .mostRestrictive).description)
        process(invigilator.begin(sessionID, client: server.clientID(client), role: role, executable: executable, surface: readiness,
                                  configuration: configuration?.draft.configuration, now: Self.now()))
    }

    /// Begins a session for `client` as if it had sent `begin` with its mapped
    /// toplevel and `configuration` (`carrel --assessment`): the same
    /// Invigilator path, so the same guarantees before `began`.
    @discardableResult
    func beginOnBehalf(of client: ClientID, role: Role, configuration: AssessmentConfiguration) -> SessionID {
        let sessionID = SessionID(nextSessionID)
        nextSessionID += 1
        onBehalfSession = sessionID
        server.audit.record("begin", session: sessionID, subject: server.waylandClient(client).map(server.auditSubject),
                            detail: "begun by Carrel on the app's behalf: \(configuration)")
        process(invigilator.begin(sessionID, client: client, role: role, surface: .mappedToplevel,
                                  configuration: configuration, now: Self.now()))
        return sessionID
    }

    /// A reloaded policy: sessions begun from now on use it.
    func adopt(session: SessionPolicy, appLock: AppLockPolicy) {
        invigilator.adopt(policy: session, appLock: appLock)
    }

    /// Whether a session is pending, active or interrupted.
    var hasLiveSession: Bool { invigilator.liveSessionID != nil }

    /// Whether `id` is that live session.
    func isLive(_ id: SessionID) -> Bool { invigilator.liveSessionID == id }

    /// Ends the session begun with `beginOnBehalf`, as the protocol's `end`.
    func endOnBehalf() {
        guard let id = onBehalfSession else { return }
        process(invigilator.end(id))
    }

    private static let sessionImplementation = permanent(carrel_assessment_session_v1_interface(
        destroy: { _, resource in wl_resource_destroy(resource) },
        end: { _, resource in
            guard let object = SessionObject.from(resource!), let service = object.service else { return }
            service.process(service.invigilator.end(object.id))
        },
        update: { _, resource, configuration in
            guard let object = SessionObject.from(resource!), let service = object.service else { return }
            let copy = configuration.flatMap(ConfigurationObject.from)?.draft.configuration ?? .mostRestrictive
            service.process(service.invigilator.update(object.id, to: copy))
        }
    ))

    private func sessionResourceDestroyed(_ object: SessionObject) {
        if invigilator.liveSessionID == object.id {
            server.audit.transition("destroyed", session: object.id, subject: nil,
                                    detail: "the client destroyed the session object (or disconnected) while it was live")
        }
        process(invigilator.destroy(object.id))
        sessions[object.id] = nil
    }

    // MARK: - Reports from the compositor

    /// Called after an output committed and presented a frame.
    func outputPresented(_ output: Output) {
        guard var wait = presentationWait else { return }
        wait.outputs.remove(ObjectIdentifier(output))
        presentationWait = wait
        if wait.outputs.isEmpty {
            presentationWait = nil
            process(invigilator.framePresented(wait.session, now: Self.now()))
        }
    }

    /// An output went away: it no longer has to present anything.
    func outputRemoved(_ output: Output) {
        outputPresented(output)
    }

    /// A restriction stopped holding: the session hears `interrupted(integrity)`.
    func integrityLost(_ message: String) {
        process(invigilator.integrityLost(message))
    }

    /// Someone with authority at the machine interrupted the session: it
    /// hears `interrupted(administrative)`; restrictions stay until the app ends it.
    func administrativeInterrupt(_ message: String) {
        process(invigilator.administrativeInterrupt(message))
    }

    /// A key pressed on a real keyboard while the confirmation prompt is up
    /// (`askingConfirmation` set): Y allows, N or Escape refuses (Core
    /// decides which); the caller consumes every key either way.
    func confirmationKey(_ keysyms: [UInt32]) {
        guard let id = askingConfirmation, let allowed = AppLock.answer(forPressed: keysyms) else { return }
        logger.notice("assessment: the person at the machine pressed \(allowed ? "Y (allow)" : "N/Escape (refuse)") for \(id)")
        process(invigilator.confirmationAnswered(id, allowed: allowed, now: Self.now()))
    }

    /// Carrel is shutting down: a pending session fails with `cancelled`, an
    /// active one hears `interrupted(shutdown)`, and later begins are refused.
    /// Called when the stop is decided and again at teardown (then a no-op).
    func shutdown() {
        process(invigilator.shutdown("Carrel is shutting down"))
        presentationWait = nil
        for timer in presentationTimers.values { wl_event_source_remove(timer) }
        for timer in timeLimitTimers.values { wl_event_source_remove(timer) }
        for timer in confirmationTimers.values { wl_event_source_remove(timer) }
        for timer in bannerTimers.values { wl_event_source_remove(timer) }
        presentationTimers.removeAll()
        timeLimitTimers.removeAll()
        confirmationTimers.removeAll()
        bannerTimers.removeAll()
        if let global { wl_global_destroy(global) }
        global = nil
    }

    // MARK: - Administrator (carrelctl)

    /// The `status` report: the session with its owner's pid and role.
    func controlStatus(mode: String, clients: [Role: Int]) -> ControlStatus {
        ControlStatus(mode: mode, invigilator: invigilator, now: Self.now(), owner: { [self] owner in
            // A session Carrel began itself (--assessment, Guided Access) has no resource.
            let resource = invigilator.liveSessionID.flatMap { sessions[$0]?.resource }
            guard let client = resource.map({ wl_resource_get_client($0)! }) ?? server.waylandClient(owner) else {
                return (nil, nil)
            }
            var pid: pid_t = 0
            wl_client_get_credentials(client, &pid, nil, nil)
            return (pid, server.role(of: client))
        }, clients: clients)
    }

    /// `end --reason`: the live session hears `interrupted(administrative)`.
    func administrativeEnd(reason: String) throws(ControlFailure) -> ControlOutcome {
        let (outcome, effects) = try invigilator.administrativeEnd(reason: reason)
        process(effects)
        return outcome
    }

    /// `extend MINUTES`: more time for the active session.
    func extendTimeLimit(byMinutes minutes: Int) throws(ControlFailure) -> ControlOutcome {
        let (outcome, effects) = try invigilator.extendTimeLimit(byMinutes: minutes, now: Self.now())
        process(effects)
        return outcome
    }

    // MARK: - Effects

    private func process(_ effects: [SessionEffect]) {
        var queue = effects[...]
        while let effect = queue.popFirst() {
            queue.append(contentsOf: perform(effect))
        }
    }

    /// Carries out one effect; returns the effects of any report it makes.
    private func perform(_ effect: SessionEffect) -> [SessionEffect] {
        switch effect {
        case .send(let id, let event) where id == onBehalfSession:
            auditTransition(id, event, client: invigilator.sessions[id].flatMap { server.waylandClient($0.owner) })
            server.onBehalfSessionEvent(event)
        case .send(let id, let event):
            guard let resource = sessions[id]?.resource else { return [] }
            auditTransition(id, event, client: wl_resource_get_client(resource))
            send(event, on: resource)
        case .protocolError(let violation):
            guard let object = sessions[violation.session] else { return [] }
            let target = violation.interface == "carrel_assessment_manager_v1" ? object.manager : object.resource
            if let target { carrel_resource_post_error(target, violation.code, violation.description) }
        case .applyRestrictions(let set):
            let outcome = server.applyRestrictions(set)
            return invigilator.restrictionsApplied(set.session, outcome, now: Self.now())
        case .revertRestrictions(let id):
            server.revertRestrictions(for: id)
        case .clearSelections:
            server.clearSelections()
        case .startPresentationWait(let id, let deadline):
            let outputs = server.enabledOutputs
            presentationWait = (id, Set(outputs.map(ObjectIdentifier.init)))
            arm(&presentationTimers, id, at: deadline) { service, id in
                service.presentationWait = nil
                service.process(service.invigilator.presentationDeadlinePassed(id, now: Self.now()))
            }
            if outputs.isEmpty {
                // No output, nothing anyone could see: nothing to wait for.
                presentationWait = nil
                return invigilator.framePresented(id, now: Self.now())
            }
            for output in outputs { output.requestFullFrame() }
        case .stopPresentationWait(let id):
            if presentationWait?.session == id { presentationWait = nil }
            disarm(&presentationTimers, id)
        case .armTimeLimit(let id, let deadline):
            arm(&timeLimitTimers, id, at: deadline) { service, id in
                service.process(service.invigilator.timeLimitReached(id, now: Self.now()))
            }
        case .disarmTimeLimit(let id):
            disarm(&timeLimitTimers, id)
        case .askConfirmation(let id, let prompt, let deadline):
            if askingConfirmation != id {
                // Without the prompt on screen nobody can answer: fail closed.
                guard server.showOverlay(.prompt, text: prompt) else {
                    return invigilator.confirmationUnavailable(id, "no output to draw it on, or out of memory")
                }
                askingConfirmation = id
                for output in server.enabledOutputs { output.requestFullFrame() }
            }
            arm(&confirmationTimers, id, at: deadline) { service, id in
                service.process(service.invigilator.confirmationDeadlinePassed(id, now: Self.now()))
            }
        case .dismissConfirmation(let id):
            disarm(&confirmationTimers, id)
            if askingConfirmation == id {
                askingConfirmation = nil
                server.hideOverlay(.prompt)
            }
        case .showBanner(let id, let text, let until):
            if server.showOverlay(.banner, text: text) {
                arm(&bannerTimers, id, at: until) { service, id in
                    service.disarm(&service.bannerTimers, id)
                    service.server.hideOverlay(.banner)
                }
            } else {
                logger.warning("assessment: could not draw the banner for \(id)")
            }
        case .hideBanner(let id):
            if bannerTimers[id] != nil {
                disarm(&bannerTimers, id)
                server.hideOverlay(.banner)
            }
        case .lockStateChanged(let state):
            for manager in managers {
                carrel_assessment_manager_v1_send_lock_state(manager.resource, state == .active ? 1 : 0)
                carrel_assessment_manager_v1_send_done(manager.resource)
            }
        case .log(let entry):
            switch entry.level {
            case .info: logger.info("assessment: \(entry.message)")
            case .notice: logger.notice("assessment: \(entry.message)")
            case .warning: logger.warning("assessment: \(entry.message)")
            case .error: logger.error("assessment: \(entry.message)")
            }
        }
        return []
    }

    /// On disk before the client hears it.
    private func auditTransition(_ id: SessionID, _ event: SessionEvent, client: OpaquePointer?) {
        let (name, reason, message) = event.parts
        server.audit.transition(name, session: id, subject: client.map(server.auditSubject), reason: reason, detail: message)
        if event.isTerminal {
            logger.notice("audit: \(id) \(name); chain head \(server.audit.head) at seq \(server.audit.seq)")
        }
    }

    private func send(_ event: SessionEvent, on resource: WlResource) {
        let version = UInt32(wl_resource_get_version(resource))
        switch event {
        case .began: carrel_assessment_session_v1_send_began(resource)
        case .failed(let reason, let message):
            carrel_assessment_session_v1_send_failed(resource, reason.wireValue(forVersion: version), message)
        case .interrupted(let reason, let message):
            carrel_assessment_session_v1_send_interrupted(resource, reason.wireValue(forVersion: version), message)
        case .ended: carrel_assessment_session_v1_send_ended(resource)
        case .updated: carrel_assessment_session_v1_send_updated(resource)
        case .updateFailed(let reason, let message):
            carrel_assessment_session_v1_send_update_failed(resource, reason.wireValue(forVersion: version), message)
        }
        wl_client_flush(wl_resource_get_client(resource))
    }

    // MARK: - Timers

    private final class TimerContext {
        weak var service: AssessmentService?
        let id: SessionID
        let fire: (AssessmentService, SessionID) -> Void
        init(service: AssessmentService, id: SessionID, fire: @escaping (AssessmentService, SessionID) -> Void) {
            self.service = service; self.id = id; self.fire = fire
        }
    }
    private var timerContexts: [OpaquePointer: TimerContext] = [:]

    private func arm(_ timers: inout [SessionID: OpaquePointer], _ id: SessionID, at deadline: Instant,
                     fire: @escaping (AssessmentService, SessionID) -> Void) {
        disarm(&timers, id)
        let context = TimerContext(service: self, id: id, fire: fire)
        let loop = wl_display_get_event_loop(server.display)
        guard let source = wl_event_loop_add_timer(loop, { data in
            let context = Unmanaged<TimerContext>.fromOpaque(data!).takeUnretainedValue()
            if let service = context.service { context.fire(service, context.id) }
            return 0
        }, Unmanaged.passUnretained(context).toOpaque()) else {
            logger.error("assessment: could not create a timer for \(id)")
            return
        }
        timerContexts[source] = context
        timers[id] = source
        let remaining = deadline.duration(since: Self.now())
        let (seconds, attoseconds) = remaining.components
        // 0 would disarm the timer; a deadline already passed fires at once.
        let milliseconds = max(1, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        wl_event_source_timer_update(source, milliseconds)
    }

    private func disarm(_ timers: inout [SessionID: OpaquePointer], _ id: SessionID) {
        guard let source = timers.removeValue(forKey: id) else { return }
        // Removing a source from inside its own callback is safe in libwayland.
        wl_event_source_remove(source)
        timerContexts[source] = nil
    }

    static func now() -> Instant {
        let now = carrel_now()
        return Instant(nanoseconds: UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec))
    }
}

/// Swift state behind a bound manager resource.
final class ManagerObject {
    let resource: WlResource
    weak var service: AssessmentService?
    init(resource: WlResource, service: AssessmentService) { self.resource = resource; self.service = service }
    static func from(_ resource: WlResource?) -> ManagerObject? {
        guard let resource, let data = wl_resource_get_user_data(resource) else { return nil }
        return Unmanaged<ManagerObject>.fromOpaque(data).takeUnretainedValue()
    }
}

/// A configuration object: a draft whose setters may each be used once.
final class ConfigurationObject {
    var draft = ConfigurationDraft()
    static func from(_ resource: WlResource?) -> ConfigurationObject? {
        guard let resource, let data = wl_resource_get_user_data(resource) else { return nil }
        return Unmanaged<ConfigurationObject>.fromOpaque(data).takeUnretainedValue()
    }
    /// Applies a setter; a client bug (setter twice, bad value) is a protocol error.
    func change(_ resource: WlResource, _ setter: (inout ConfigurationDraft) throws(ConfigurationError) -> Void) {
        do {
            try setter(&draft)
        } catch {
            carrel_resource_post_error(resource, error.code, error.description)
        }
    }
}

/// A session object; `resource` is nil once the client destroyed it.
final class SessionObject {
    let id: SessionID
    var resource: WlResource?
    let manager: WlResource?
    weak var service: AssessmentService?
    init(id: SessionID, resource: WlResource, manager: WlResource, service: AssessmentService) {
        self.id = id; self.resource = resource; self.manager = manager; self.service = service
    }
    static func from(_ resource: WlResource?) -> SessionObject? {
        guard let resource, let data = wl_resource_get_user_data(resource) else { return nil }
        return Unmanaged<SessionObject>.fromOpaque(data).takeUnretainedValue()
    }
}
