import CarrelAudit
import CarrelCore
import CarrelShim
import Glibc
import Logging

typealias WlResource = UnsafeMutablePointer<wl_resource>

/// The server side of carrel-assessment-v1: turns protocol requests into
/// the Desk's session inputs (`Server.drive`) and carries out the
/// Invigilator's effects (see AssessmentEffects.swift). All decisions (who
/// may lock, what a session restricts, what to answer) are Core's.
final class AssessmentService {
    unowned let server: Server
    let logger: Logger
    private var global: OpaquePointer?
    /// Bound manager resources, to broadcast lock_state changes.
    var managers: [ManagerObject] = []
    /// Session objects by id; Carrel's own sessions (`--assessment`, Guided
    /// Access) have none.
    var sessions: [SessionID: SessionObject] = [:]
    let presentationTimers: SessionTimers
    let timeLimitTimers: SessionTimers
    let confirmationTimers: SessionTimers
    let bannerTimers: SessionTimers
    /// The session whose confirmation prompt is drawn on screen.
    var promptOnScreen: SessionID?
    /// Outputs that still have to present a frame with the restrictions up,
    /// for the session waiting to begin.
    var presentationWait: (session: SessionID, outputs: Set<ObjectIdentifier>)?

    init(server: Server, logger: Logger) {
        self.server = server
        self.logger = logger
        let loop = wl_display_get_event_loop(server.display)!
        presentationTimers = SessionTimers(loop: loop, name: "presentation", logger: logger)
        timeLimitTimers = SessionTimers(loop: loop, name: "time limit", logger: logger)
        confirmationTimers = SessionTimers(loop: loop, name: "confirmation", logger: logger)
        bannerTimers = SessionTimers(loop: loop, name: "banner", logger: logger)
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
        let invigilator = server.desk.invigilator
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
        },
        deny_participant_network: { _, resource, id in
            let participant = String(cString: id!)
            ConfigurationObject.from(resource!)?.change(resource!) { (draft: inout ConfigurationDraft) throws(ConfigurationError) in try draft.denyParticipantNetwork(participant) }
        },
        deny_owner_network: { _, resource in
            ConfigurationObject.from(resource!)?.change(resource!) { (draft: inout ConfigurationDraft) throws(ConfigurationError) in try draft.denyOwnerNetwork() }
        }
    ))

    // MARK: - Session

    private func begin(client: OpaquePointer, manager: WlResource, id: UInt32, surface: WlResource,
                       configuration: ConfigurationObject?) {
        guard let resource = wl_resource_create(client, Self.sessionInterface, wl_resource_get_version(manager), id) else {
            wl_client_post_no_memory(client)
            return
        }
        let sessionID = server.decide { $0.allocateSessionID() }
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
        let copy = configuration?.draft.configuration
        server.drive { $0.begin(sessionID, client: server.clientID(client), role: role, executable: executable, surface: readiness,
                                configuration: copy, now: Self.now()) }
    }

    private static let sessionImplementation = permanent(carrel_assessment_session_v1_interface(
        destroy: { _, resource in wl_resource_destroy(resource) },
        end: { _, resource in
            guard let object = SessionObject.from(resource!), let service = object.service else { return }
            let id = object.id
            service.server.drive { $0.end(id) }
        },
        update: { _, resource, configuration in
            guard let object = SessionObject.from(resource!), let service = object.service else { return }
            let (id, copy) = (object.id, configuration.flatMap(ConfigurationObject.from)?.draft.configuration ?? .mostRestrictive)
            service.server.drive { $0.update(id, to: copy) }
        },
        request_attestation: { _, resource, nonce in
            guard let object = SessionObject.from(resource!), let service = object.service else { return }
            let bytes = nonce.map { array in
                array.pointee.size == 0 ? [] : Array(UnsafeRawBufferPointer(start: array.pointee.data, count: array.pointee.size))
            } ?? []
            service.answerAttestation(object, nonce: bytes)
        }
    ))

    /// Answers request_attestation at once, so answers keep the requests' order.
    /// Core decides; a refusal is an event, never a protocol error.
    private func answerAttestation(_ object: SessionObject, nonce: [UInt8]) {
        guard let resource = object.resource else { return }
        let record = server.desk.invigilator.session(object.id)
        // After failed or ended the object is inert: the request is ignored.
        if let record, record.phase.isInert { return }
        let answer = server.attestor.answer(
            nonce: nonce, session: record, policy: server.policy.preconditions,
            providers: server.policy.providers.enabledNames, virtualMachine: server.environment.virtualMachine,
            chain: AuditChainPosition(head: server.audit.head, seq: server.audit.seq), run: server.audit.run, now: Self.now())
        switch answer {
        case .success(let envelope):
            server.audit.record(AuditEvent.attestation, session: object.id, subject: server.auditSubject(wl_resource_get_client(resource)),
                                detail: "signed a statement of \(envelope.statement.count) bytes")
            var signature = wl_array()
            wl_array_init(&signature)
            defer { wl_array_release(&signature) }
            if let slot = wl_array_add(&signature, envelope.signature.count) {
                envelope.signature.withUnsafeBytes { slot.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
            let text = String(decoding: envelope.statement, as: UTF8.self)
            carrel_assessment_session_v1_send_attestation(resource, text, &signature)
        case .failure(let refusal):
            logger.info("attestation for \(object.id) refused: \(refusal.reason): \(refusal.message)")
            let version = UInt32(wl_resource_get_version(resource))
            carrel_assessment_session_v1_send_attestation_failed(resource, refusal.reason.wireValue(forVersion: version), refusal.message)
        }
        wl_client_flush(wl_resource_get_client(resource))
    }

    private func sessionResourceDestroyed(_ object: SessionObject) {
        let id = object.id
        if server.desk.isLive(id) {
            server.audit.transition("destroyed", session: id, subject: nil,
                                    detail: "the client destroyed the session object (or disconnected) while it was live")
        }
        server.drive { $0.destroy(id) }
        sessions[id] = nil
        server.attestor.forget(id)
    }

    // MARK: - Reports from the compositor

    /// Called after an output committed and presented a frame.
    func outputPresented(_ output: Output) {
        guard var wait = presentationWait else { return }
        wait.outputs.remove(ObjectIdentifier(output))
        presentationWait = wait
        if wait.outputs.isEmpty {
            presentationWait = nil
            server.drive { $0.framePresented(wait.session, now: Self.now()) }
        }
    }

    /// An output went away: it no longer has to present anything.
    func outputRemoved(_ output: Output) {
        outputPresented(output)
    }

    /// Carrel is shutting down: a pending session fails with `cancelled`, an
    /// active one hears `interrupted(shutdown)`, and later begins are refused.
    /// Called when the stop is decided and again at teardown (then a no-op).
    func shutdown() {
        server.drive { $0.shutdown("Carrel is shutting down") }
        presentationWait = nil
        for timers in [presentationTimers, timeLimitTimers, confirmationTimers, bannerTimers] { timers.cancelAll() }
        if let global { wl_global_destroy(global) }
        global = nil
    }

    // MARK: - Administrator (carrelctl)

    /// The `status` report: the session with its owner's pid and role.
    func controlStatus(mode: String, clients: [Role: Int], metrics: ControlStatus.Metrics?) -> ControlStatus {
        let invigilator = server.desk.invigilator
        return ControlStatus(mode: mode, invigilator: invigilator, now: Self.now(), owner: { [self] owner in
            // A session Carrel began itself (--assessment, Guided Access) has no resource.
            let resource = invigilator.liveSessionID.flatMap { sessions[$0]?.resource }
            guard let client = resource.map({ wl_resource_get_client($0)! }) ?? server.waylandClient(owner) else {
                return (nil, nil)
            }
            var pid: pid_t = 0
            wl_client_get_credentials(client, &pid, nil, nil)
            return (pid, server.role(of: client))
        }, clients: clients, metrics: metrics)
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
