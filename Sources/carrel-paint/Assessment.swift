import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// Begins and ends assessment sessions (carrel-assessment-v1) for the
/// window, with a null (most restrictive) configuration, timestamping each
/// step for benchmarks.
///
/// Each cycle prints, as it happens, `milestone begin NS` (just before the
/// begin request is flushed), `milestone began NS` (when began arrives),
/// `milestone end NS` and `milestone ended NS`, NS being CLOCK_MONOTONIC
/// nanoseconds. Unlike the start-up milestones these repeat, once per cycle.
/// `failed` prints `assess failed REASON MESSAGE` and exits 1;
/// `interrupted` prints `assess interrupted REASON MESSAGE`.
final class AssessmentRunner {
    enum Plan: Equatable {
        /// Begin and end this many sessions, one after the other.
        case cycles(Int)
        /// Begin one session and keep it until the client exits.
        case hold
    }

    /// `--allow-magnifier`: the held session's configuration allows screen_magnifier.
    var allowMagnifier = false
    /// When the held session began (monotonic nanoseconds), until it is ended.
    private(set) var heldSince: UInt64?

    /// Called once the plan is carried out (after the last `ended`, or
    /// after `began` when holding).
    var onFinished: () -> Void = {}

    private let connection: Connection
    private let manager: OpaquePointer
    private let surface: OpaquePointer
    private let plan: Plan
    /// Ask for a signed statement after each began, and end once it arrives.
    private let attest: Bool
    private var session: OpaquePointer?
    private var completed = 0

    init(connection: Connection, manager: OpaquePointer, surface: OpaquePointer, plan: Plan, attest: Bool = false) {
        self.attest = attest
        self.connection = connection
        self.manager = manager
        self.surface = surface
        self.plan = plan
    }

    deinit {
        if let session { carrel_assessment_session_v1_destroy(session) }
    }

    /// Begins the first session; call once the window is mapped.
    func start() {
        if case .cycles(let count) = plan, count <= 0 {
            onFinished()
            return
        }
        begin()
    }

    private func begin() {
        var configuration: OpaquePointer?
        if allowMagnifier {
            configuration = carrel_assessment_manager_v1_create_configuration(manager)
            carrel_assessment_configuration_v1_allow_feature(configuration, CARREL_ASSESSMENT_MANAGER_V1_FEATURE_SCREEN_MAGNIFIER.rawValue)
        }
        let session = carrel_assessment_manager_v1_begin(manager, surface, configuration)
        if let configuration { carrel_assessment_configuration_v1_destroy(configuration) }
        self.session = session
        carrel_assessment_session_v1_add_listener(session, sessionListener, Unmanaged.passUnretained(self).toOpaque())
        stamp("begin")
        wl_display_flush(connection.display)
    }

    fileprivate func handleBegan() {
        stamp("began")
        switch plan {
        case .hold:
            heldSince = MonotonicClock.nanoseconds()
            onFinished()
        case .cycles where attest:
            var nonce = wl_array()
            wl_array_init(&nonce)
            defer { wl_array_release(&nonce) }
            if let slot = wl_array_add(&nonce, 32) {
                for i in 0..<32 { slot.storeBytes(of: UInt8.random(in: 0...255), toByteOffset: i, as: UInt8.self) }
            }
            carrel_assessment_session_v1_request_attestation(session, &nonce)
            wl_display_flush(connection.display)
        case .cycles:
            endSession()
        }
    }

    fileprivate func handleAttestation() {
        stamp("attested")
        endSession()
    }

    fileprivate func handleAttestationFailed(reason: UInt32, message: String) {
        print("assess attestation_failed \(reason) \(message)")
        fflush(stdout)
        printError("no signed statement (reason \(reason)): \(message)")
        exit(1)
    }

    private func endSession() {
        switch plan {
        case .hold: break
        case .cycles:
            stamp("end")
            carrel_assessment_session_v1_end(session)
            wl_display_flush(connection.display)
        }
    }

    /// Ends the held session (`--end-after-ms`); `ended` is printed when it comes.
    func endHeld() {
        guard heldSince != nil, let session else { return }
        heldSince = nil
        stamp("end")
        carrel_assessment_session_v1_end(session)
        wl_display_flush(connection.display)
    }

    fileprivate func handleEnded() {
        stamp("ended")
        if let session { carrel_assessment_session_v1_destroy(session) }
        session = nil
        completed += 1
        if case .cycles(let count) = plan, completed < count {
            begin()
        } else {
            onFinished()
        }
    }

    fileprivate func handleFailed(reason: UInt32, message: String) {
        print("assess failed \(reason) \(message)")
        fflush(stdout)
        printError("the session failed to begin (reason \(reason)): \(message)")
        exit(1)
    }

    fileprivate func handleInterrupted(reason: UInt32, message: String) {
        print("assess interrupted \(reason) \(message)")
        fflush(stdout)
    }

    private func stamp(_ name: String) {
        let now = MonotonicClock.nanoseconds()
        print("milestone \(name) \(now)")
        fflush(stdout)
    }
}

private func runner(_ data: UnsafeMutableRawPointer?) -> AssessmentRunner {
    Unmanaged<AssessmentRunner>.fromOpaque(data!).takeUnretainedValue()
}

private let sessionListener = staticListener(carrel_assessment_session_v1_listener(
    began: { data, _ in runner(data).handleBegan() },
    failed: { data, _, reason, message in
        runner(data).handleFailed(reason: reason, message: message.map { String(cString: $0) } ?? "")
    },
    interrupted: { data, _, reason, message in
        runner(data).handleInterrupted(reason: reason, message: message.map { String(cString: $0) } ?? "")
    },
    ended: { data, _ in runner(data).handleEnded() },
    updated: { _, _ in },
    update_failed: { _, _, _, _ in },
    attestation: { data, _, _, _ in runner(data).handleAttestation() },
    attestation_failed: { data, _, reason, message in
        runner(data).handleAttestationFailed(reason: reason, message: message.map { String(cString: $0) } ?? "")
    }
))
