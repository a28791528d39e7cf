import CarrelCore
import Testing

/// Every session state × every input, as a table: what the session becomes,
/// which events it is sent, whether selections are cleared, whether
/// restrictions hold afterwards, and which protocol error (if any) is raised.
@Suite("Session transitions")
struct SessionTransitionTests {
    /// The session under test, its owner, and a second client.
    static let session = SessionID(1)
    static let other = SessionID(2)
    static let owner = ClientID(10)
    static let stranger = ClientID(20)
    static let policy = SessionPolicy(defaultTimeLimit: 600, knownParticipants: ["calculator"])

    /// Where the session under test starts.
    enum Start: String, CaseIterable, CustomTestStringConvertible {
        case none, restricting, awaitingPresentation, active, updating, interrupted, failed, ended
        var testDescription: String { rawValue }
    }

    /// What happens next.
    enum Input: String, CaseIterable, CustomTestStringConvertible {
        case beginByStranger, beginBySameClient
        case restrictionsApplied, restrictionsFailed
        case framePresented, presentationDeadlinePassed, timeLimitReached
        case end, updateSupported, updateUnsupported, destroy
        case ownerDisconnects, strangerDisconnects
        case integrityLost, administrativeInterrupt, shutdown
        var testDescription: String { rawValue }
    }

    /// The session's state as the table names it.
    enum Kind: Equatable, CustomStringConvertible {
        case gone, restricting, awaitingConfirmation, awaitingPresentation, active, updating, interrupted, failed(FailureReason), ended

        init(_ record: SessionRecord?) {
            guard let record else { self = .gone; return }
            switch record.phase {
            case .restricting: self = .restricting
            case .awaitingConfirmation: self = .awaitingConfirmation
            case .awaitingPresentation: self = .awaitingPresentation
            case .active: self = record.restrictionRequest == nil ? .active : .updating
            case .interrupted: self = .interrupted
            case .failed(let reason): self = .failed(reason)
            case .ended: self = .ended
            }
        }

        var description: String {
            switch self {
            case .gone: return "gone"
            case .restricting: return "restricting"
            case .awaitingConfirmation: return "awaiting-confirmation"
            case .awaitingPresentation: return "awaiting-presentation"
            case .active: return "active"
            case .updating: return "updating"
            case .interrupted: return "interrupted"
            case .failed(let reason): return "failed(\(reason))"
            case .ended: return "ended"
            }
        }
    }

    struct Expect: CustomStringConvertible {
        var kind: Kind
        var events: [SessionEvent.Kind] = []
        var clears = false
        var restricted = false
        var violation: ProtocolViolation? = nil
        /// For the begin inputs: what the second session becomes.
        var second: Kind? = nil
        var description: String { "\(kind) \(events)" }
    }

    struct Row: CustomTestStringConvertible {
        var start: Start
        var input: Input
        var expect: Expect
        var testDescription: String { "\(start.rawValue) × \(input.rawValue)" }
    }

    // MARK: The table

    static let rows: [Row] = {
        var rows: [Row] = []
        func row(_ start: Start, _ input: Input, _ expect: Expect) { rows.append(Row(start: start, input: input, expect: expect)) }
        let s = session

        // No session: inputs about it are ignored; a begin is accepted.
        for input in Input.allCases {
            switch input {
            case .beginByStranger, .beginBySameClient:
                row(.none, input, Expect(kind: .gone, clears: true, second: .restricting))
            default:
                row(.none, input, Expect(kind: .gone))
            }
        }

        // Pending, before the restrictions are confirmed.
        row(.restricting, .beginByStranger, Expect(kind: .restricting, second: .failed(.alreadyActive)))
        row(.restricting, .beginBySameClient, Expect(kind: .restricting, second: .failed(.alreadyActive)))
        row(.restricting, .restrictionsApplied, Expect(kind: .awaitingPresentation, restricted: true))
        row(.restricting, .restrictionsFailed, Expect(kind: .failed(.restrictionFailed), events: [.failed(.restrictionFailed)], clears: true))
        row(.restricting, .framePresented, Expect(kind: .restricting))
        row(.restricting, .presentationDeadlinePassed, Expect(kind: .restricting))
        row(.restricting, .timeLimitReached, Expect(kind: .restricting))
        row(.restricting, .end, Expect(kind: .restricting, violation: .notBegun(s)))
        row(.restricting, .updateSupported, Expect(kind: .restricting, violation: .notBegun(s)))
        row(.restricting, .updateUnsupported, Expect(kind: .restricting, violation: .notBegun(s)))
        row(.restricting, .destroy, Expect(kind: .gone, clears: true))
        row(.restricting, .ownerDisconnects, Expect(kind: .gone, clears: true))
        row(.restricting, .strangerDisconnects, Expect(kind: .restricting))
        row(.restricting, .integrityLost, Expect(kind: .failed(.restrictionFailed), events: [.failed(.restrictionFailed)], clears: true))
        row(.restricting, .administrativeInterrupt, Expect(kind: .failed(.cancelled), events: [.failed(.cancelled)], clears: true))
        row(.restricting, .shutdown, Expect(kind: .failed(.cancelled), events: [.failed(.cancelled)], clears: true))

        // Pending, restrictions hold, waiting for the frame.
        row(.awaitingPresentation, .beginByStranger, Expect(kind: .awaitingPresentation, restricted: true, second: .failed(.alreadyActive)))
        row(.awaitingPresentation, .beginBySameClient, Expect(kind: .awaitingPresentation, restricted: true, second: .failed(.alreadyActive)))
        row(.awaitingPresentation, .restrictionsApplied, Expect(kind: .awaitingPresentation, restricted: true))
        row(.awaitingPresentation, .restrictionsFailed, Expect(kind: .awaitingPresentation, restricted: true))
        row(.awaitingPresentation, .framePresented, Expect(kind: .active, events: [.began], restricted: true))
        row(.awaitingPresentation, .presentationDeadlinePassed, Expect(kind: .failed(.timeout), events: [.failed(.timeout)], clears: true))
        row(.awaitingPresentation, .timeLimitReached, Expect(kind: .awaitingPresentation, restricted: true))
        row(.awaitingPresentation, .end, Expect(kind: .awaitingPresentation, restricted: true, violation: .notBegun(s)))
        row(.awaitingPresentation, .updateSupported, Expect(kind: .awaitingPresentation, restricted: true, violation: .notBegun(s)))
        row(.awaitingPresentation, .updateUnsupported, Expect(kind: .awaitingPresentation, restricted: true, violation: .notBegun(s)))
        row(.awaitingPresentation, .destroy, Expect(kind: .gone, clears: true))
        row(.awaitingPresentation, .ownerDisconnects, Expect(kind: .gone, clears: true))
        row(.awaitingPresentation, .strangerDisconnects, Expect(kind: .awaitingPresentation, restricted: true))
        row(.awaitingPresentation, .integrityLost, Expect(kind: .failed(.restrictionFailed), events: [.failed(.restrictionFailed)], clears: true))
        row(.awaitingPresentation, .administrativeInterrupt, Expect(kind: .failed(.cancelled), events: [.failed(.cancelled)], clears: true))
        row(.awaitingPresentation, .shutdown, Expect(kind: .failed(.cancelled), events: [.failed(.cancelled)], clears: true))

        // Active, and active with an update being applied: mostly alike.
        for start in [Start.active, .updating] {
            row(start, .beginByStranger, Expect(kind: start == .active ? .active : .updating, restricted: true, second: .failed(.alreadyActive)))
            row(start, .beginBySameClient, Expect(kind: start == .active ? .active : .updating, restricted: true, second: .failed(.alreadyActive)))
            row(start, .framePresented, Expect(kind: start == .active ? .active : .updating, restricted: true))
            row(start, .presentationDeadlinePassed, Expect(kind: start == .active ? .active : .updating, restricted: true))
            row(start, .timeLimitReached, Expect(kind: .interrupted, events: [.interrupted(.timeLimit)], clears: true, restricted: true))
            row(start, .end, Expect(kind: .ended, events: [.ended], clears: true))
            row(start, .destroy, Expect(kind: .gone, clears: true))
            row(start, .ownerDisconnects, Expect(kind: .gone, clears: true))
            row(start, .strangerDisconnects, Expect(kind: start == .active ? .active : .updating, restricted: true))
            row(start, .integrityLost, Expect(kind: .interrupted, events: [.interrupted(.integrity)], clears: true, restricted: true))
            row(start, .administrativeInterrupt, Expect(kind: .interrupted, events: [.interrupted(.administrative)], clears: true, restricted: true))
            row(start, .shutdown, Expect(kind: .interrupted, events: [.interrupted(.shutdown)], clears: true, restricted: true))
        }
        row(.active, .restrictionsApplied, Expect(kind: .active, restricted: true))
        row(.active, .restrictionsFailed, Expect(kind: .active, restricted: true))
        row(.active, .updateSupported, Expect(kind: .updating, restricted: true))
        row(.active, .updateUnsupported, Expect(kind: .active, events: [.updateFailed(.unsupportedConfiguration)], restricted: true))
        row(.updating, .restrictionsApplied, Expect(kind: .active, events: [.updated], restricted: true))
        row(.updating, .restrictionsFailed, Expect(kind: .active, events: [.updateFailed(.restrictionFailed)], restricted: true))
        // A second update waits for the first, to keep answers in order.
        row(.updating, .updateSupported, Expect(kind: .updating, restricted: true))
        row(.updating, .updateUnsupported, Expect(kind: .updating, restricted: true))

        // Interrupted: not terminal, restrictions stay until end or destroy.
        row(.interrupted, .beginByStranger, Expect(kind: .interrupted, restricted: true, second: .failed(.alreadyActive)))
        row(.interrupted, .beginBySameClient, Expect(kind: .interrupted, restricted: true, second: .failed(.alreadyActive)))
        row(.interrupted, .restrictionsApplied, Expect(kind: .interrupted, restricted: true))
        row(.interrupted, .restrictionsFailed, Expect(kind: .interrupted, restricted: true))
        row(.interrupted, .framePresented, Expect(kind: .interrupted, restricted: true))
        row(.interrupted, .presentationDeadlinePassed, Expect(kind: .interrupted, restricted: true))
        row(.interrupted, .timeLimitReached, Expect(kind: .interrupted, events: [.interrupted(.timeLimit)], clears: true, restricted: true))
        row(.interrupted, .end, Expect(kind: .ended, events: [.ended], clears: true))
        row(.interrupted, .updateSupported, Expect(kind: .interrupted, events: [.updateFailed(.interrupted)], restricted: true))
        row(.interrupted, .updateUnsupported, Expect(kind: .interrupted, events: [.updateFailed(.interrupted)], restricted: true))
        row(.interrupted, .destroy, Expect(kind: .gone, clears: true))
        row(.interrupted, .ownerDisconnects, Expect(kind: .gone, clears: true))
        row(.interrupted, .strangerDisconnects, Expect(kind: .interrupted, restricted: true))
        row(.interrupted, .integrityLost, Expect(kind: .interrupted, events: [.interrupted(.integrity)], clears: true, restricted: true))
        row(.interrupted, .administrativeInterrupt, Expect(kind: .interrupted, events: [.interrupted(.administrative)], clears: true, restricted: true))
        row(.interrupted, .shutdown, Expect(kind: .interrupted, events: [.interrupted(.shutdown)], clears: true, restricted: true))

        // Inert: only destroy matters (and a second end is a client bug).
        for start in [Start.failed, .ended] {
            let kind: Kind = start == .failed ? .failed(.timeout) : .ended
            for input in Input.allCases {
                switch input {
                case .beginByStranger, .beginBySameClient:
                    row(start, input, Expect(kind: kind, clears: true, second: .restricting))
                case .destroy, .ownerDisconnects:
                    row(start, input, Expect(kind: .gone))
                case .end where start == .ended:
                    row(start, input, Expect(kind: kind, violation: .alreadyEnded(s)))
                default:
                    row(start, input, Expect(kind: kind))
                }
            }
        }
        return rows
    }()

    // MARK: Running a row

    /// Brings a fresh Invigilator to `start`; returns it and the instant it is at.
    static func prepare(_ start: Start) -> (Invigilator, Instant) {
        var invigilator = Invigilator(policy: policy)
        var now = Instant.seconds(100)
        func begin() {
            _ = invigilator.begin(session, client: owner, role: .app, surface: .mappedToplevel, configuration: nil, now: now)
        }
        switch start {
        case .none:
            break
        case .restricting:
            begin()
        case .awaitingPresentation:
            begin(); _ = invigilator.restrictionsApplied(session, .applied, now: now)
        case .active, .updating, .interrupted, .ended:
            begin(); _ = invigilator.restrictionsApplied(session, .applied, now: now)
            now = now.advanced(by: .milliseconds(16))
            _ = invigilator.framePresented(session, now: now)
            switch start {
            case .updating: _ = invigilator.update(session, to: AssessmentConfiguration(allowedFeatures: [.spellCheck]))
            case .interrupted: _ = invigilator.integrityLost("a capture client appeared")
            case .ended: _ = invigilator.end(session)
            default: break
            }
        case .failed:
            begin(); _ = invigilator.restrictionsApplied(session, .applied, now: now)
            now = now.advanced(by: .seconds(10))
            _ = invigilator.presentationDeadlinePassed(session, now: now)
        }
        return (invigilator, now)
    }

    static func apply(_ input: Input, to invigilator: inout Invigilator, now: Instant) -> [SessionEffect] {
        let later = now.advanced(by: .seconds(24 * 3600))   // past every deadline
        switch input {
        case .beginByStranger:
            return invigilator.begin(other, client: stranger, role: .app, surface: .mappedToplevel, configuration: nil, now: now)
        case .beginBySameClient:
            return invigilator.begin(other, client: owner, role: .app, surface: .mappedToplevel, configuration: nil, now: now)
        case .restrictionsApplied: return invigilator.restrictionsApplied(session, .applied, now: now)
        case .restrictionsFailed: return invigilator.restrictionsApplied(session, .failed("capture could not be refused"), now: now)
        case .framePresented: return invigilator.framePresented(session, now: now)
        case .presentationDeadlinePassed: return invigilator.presentationDeadlinePassed(session, now: later)
        case .timeLimitReached: return invigilator.timeLimitReached(session, now: later)
        case .end: return invigilator.end(session)
        case .updateSupported: return invigilator.update(session, to: AssessmentConfiguration(allowedFeatures: [.inputMethod]))
        case .updateUnsupported: return invigilator.update(session, to: AssessmentConfiguration(participants: ["browser"]))
        case .destroy: return invigilator.destroy(session)
        case .ownerDisconnects: return invigilator.clientDisconnected(owner)
        case .strangerDisconnects: return invigilator.clientDisconnected(stranger)
        case .integrityLost: return invigilator.integrityLost("a capture client appeared")
        case .administrativeInterrupt: return invigilator.administrativeInterrupt("released by the exam office")
        case .shutdown: return invigilator.shutdown("system is going down")
        }
    }

    @Test("the table covers every state × input exactly once")
    func tableIsComplete() {
        for start in Start.allCases {
            for input in Input.allCases {
                let count = Self.rows.filter { $0.start == start && $0.input == input }.count
                #expect(count == 1, "\(start) × \(input) appears \(count) times")
            }
        }
        #expect(Self.rows.count == Start.allCases.count * Input.allCases.count)
    }

    @Test("transition", arguments: rows)
    func transition(_ row: Row) {
        var (invigilator, now) = Self.prepare(row.start)
        let before = invigilator.session(Self.session)
        let effects = Self.apply(row.input, to: &invigilator, now: now)
        let after = invigilator.session(Self.session)

        #expect(Kind(after) == row.expect.kind)
        #expect(effects.events(on: Self.session).map(\.kind) == row.expect.events)
        #expect(effects.clearsSelections == row.expect.clears)
        #expect((invigilator.restrictionsInForce != nil) == row.expect.restricted)
        #expect(effects.protocolErrors == (row.expect.violation.map { [$0] } ?? []))
        if let second = row.expect.second {
            #expect(Kind(invigilator.session(Self.other)) == second)
        }
        // The session under test never sees events it should not, even when
        // the input concerned another session.
        if row.expect.events.isEmpty, let before, let after, before.phase == after.phase {
            #expect(before.configuration == after.configuration)
        }
        #expect(CompositorDouble.selectionProblems(effects).isEmpty)
        // Everything that holds restrictions is the one live session.
        #expect(invigilator.sessions.values.filter(\.phase.isLive).count <= 1)
    }
}

extension SessionEvent {
    /// An event without its message, for tables.
    enum Kind: Equatable, CustomStringConvertible {
        case began, failed(FailureReason), interrupted(InterruptionReason), ended, updated, updateFailed(FailureReason)
        var description: String {
            switch self {
            case .began: return "began"
            case .failed(let reason): return "failed(\(reason))"
            case .interrupted(let reason): return "interrupted(\(reason))"
            case .ended: return "ended"
            case .updated: return "updated"
            case .updateFailed(let reason): return "update_failed(\(reason))"
            }
        }
    }

    var kind: Kind {
        switch self {
        case .began: return .began
        case .failed(let reason, _): return .failed(reason)
        case .interrupted(let reason, _): return .interrupted(reason)
        case .ended: return .ended
        case .updated: return .updated
        case .updateFailed(let reason, _): return .updateFailed(reason)
        }
    }
}
