import AssessmentKit
import Testing

@Suite("AssessmentSession over the in-memory lockdown")
struct AssessmentSessionTests {
    @Test("a configuration is most restrictive by default")
    func mostRestrictive() {
        let configuration = AssessmentConfiguration()
        #expect(configuration.allowedFeatures.isEmpty)
        #expect(configuration.participants.isEmpty)
        #expect(configuration.timeLimit == nil)
    }

    @Test("begin is answered later, by began alone")
    func beganOnce() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        #expect(session.state == .beginning)
        #expect(recorder.events.isEmpty, "answers come from dispatch, not from within begin()")
        #expect(lockdown.isLocked, "a pending session holds the lock")
        lockdown.dispatch()
        #expect(recorder.events == [.began])
        #expect(session.isActive)
        #expect(lockdown.requests == [.begin(AssessmentConfiguration())])
    }

    @Test("a failed begin is terminal and leaves nothing locked",
          arguments: [AssessmentError.Code.notEntitled, .unsupportedConfiguration, .surfaceNotReady, .timeout,
                      .restrictionFailed, .internal, .cancelled])
    func failedOnce(code: AssessmentError.Code) {
        let lockdown = InMemoryAssessmentManager()
        lockdown.nextBeginResult = .failed(code, message: "because")
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        #expect(recorder.events == [.failed(AssessmentError(code, message: "because"))])
        #expect(session.state == .failed)
        #expect(!session.isActive)
        #expect(!lockdown.isLocked)
        // Inert: nothing more is sent or heard.
        session.end()
        session.begin()
        session.update(to: AssessmentConfiguration(allowedFeatures: [.spellCheck]))
        lockdown.interrupt(.integrity)
        lockdown.dispatch()
        #expect(recorder.events.count == 2, "only the local refusal of update follows")
        if case .updateFailed(_, let error) = recorder.events.last {
            #expect(error.code == .notActive)
        } else {
            Issue.record("expected update_failed, got \(recorder.events)")
        }
        #expect(lockdown.requests.count == 1, "only the begin reached the lockdown")
    }

    @Test("a second session fails with already_active while the first stays active")
    func secondSession() {
        let lockdown = InMemoryAssessmentManager()
        let (first, firstRecorder) = makeSession(lockdown)
        first.begin()
        lockdown.dispatch()
        let (second, secondRecorder) = makeSession(lockdown)
        second.begin()
        lockdown.dispatch()
        #expect(secondRecorder.events.map(\.isTerminal) == [true])
        if case .failed(let error) = secondRecorder.events.first {
            #expect(error.code == .alreadyActive)
        } else {
            Issue.record("expected failed, got \(secondRecorder.events)")
        }
        #expect(first.state == .active)
        #expect(firstRecorder.events == [.began])
        #expect(lockdown.isLocked)
    }

    @Test("interrupted is not terminal: the lock holds until end, then ended")
    func interruptedThenEnd() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        #expect(lockdown.interrupt(.timeLimit, message: "time is up"))
        lockdown.dispatch()
        #expect(recorder.events == [.began, .interrupted(AssessmentError(.timeLimit, message: "time is up"))])
        #expect(session.state == .interrupted)
        #expect(session.isActive && session.isInterrupted)
        #expect(lockdown.isLocked, "restrictions stay until the app ends the session")
        session.end()
        #expect(session.state == .ending)
        lockdown.dispatch()
        #expect(recorder.events.last == .ended)
        #expect(session.state == .ended)
        #expect(!lockdown.isLocked)
        #expect(lockdown.requests == [.begin(AssessmentConfiguration()), .end])
    }

    @Test("ended without end (an administrator's force end) is terminal, and end is not sent after it")
    func forceEnded() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        #expect(lockdown.forceEnd(message: "app hangs"))
        lockdown.dispatch()
        #expect(recorder.events == [.began, .interrupted(AssessmentError(.administrative, message: "app hangs")), .ended])
        #expect(session.state == .ended && !session.isActive)
        #expect(!lockdown.isLocked)
        session.end()
        #expect(lockdown.requests == [.begin(AssessmentConfiguration())], "no end after ended")
        #expect(!lockdown.forceEnd(), "nothing left to end")
    }

    @Test("end twice sends end once")
    func endTwice() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        session.end()
        session.end()
        lockdown.dispatch()
        session.end()
        #expect(lockdown.requests.filter { $0 == .end }.count == 1)
        #expect(recorder.events == [.began, .ended])
    }

    @Test("an update applies completely")
    func updateApplies() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        let wider = AssessmentConfiguration(allowedFeatures: [.screenReader], timeLimit: .seconds(600))
        session.update(to: wider)
        #expect(session.configuration == AssessmentConfiguration(), "nothing changes before the answer")
        lockdown.dispatch()
        #expect(recorder.events == [.began, .updated(wider)])
        #expect(session.configuration == wider)
        #expect(lockdown.lockedConfiguration == wider)
    }

    @Test("a refused update changes nothing")
    func updateFails() {
        let lockdown = InMemoryAssessmentManager()
        let original = AssessmentConfiguration(allowedFeatures: [.spellCheck])
        let (session, recorder) = makeSession(lockdown, original)
        session.begin()
        lockdown.dispatch()
        lockdown.nextUpdateResult = .failed(.unsupportedConfiguration, message: "unknown participant")
        let refused = AssessmentConfiguration(participants: ["nobody"])
        session.update(to: refused)
        lockdown.dispatch()
        #expect(recorder.events == [.began, .updateFailed(
            refused, AssessmentError(.unsupportedConfiguration, message: "unknown participant"))])
        #expect(session.configuration == original)
        #expect(lockdown.lockedConfiguration == original)
    }

    @Test("updates are answered in order; an interrupted session refuses them")
    func updatesInOrder() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        let a = AssessmentConfiguration(allowedFeatures: [.autocorrect])
        let b = AssessmentConfiguration(allowedFeatures: [.inputMethod])
        session.update(to: a)
        session.update(to: b)
        lockdown.dispatch()
        #expect(recorder.events == [.began, .updated(a), .updated(b)])
        lockdown.interrupt(.integrity)
        lockdown.dispatch()
        session.update(to: a)
        lockdown.dispatch()
        if case .updateFailed(let configuration, let error) = recorder.events.last {
            #expect(configuration == a)
            #expect(error.code == .interrupted)
        } else {
            Issue.record("expected update_failed, got \(String(describing: recorder.events.last))")
        }
        #expect(session.configuration == b)
    }

    @Test("update before began is refused at once, without a request")
    func updateBeforeBegan() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        session.update(to: AssessmentConfiguration(allowedFeatures: [.spellCheck]))
        guard case .updateFailed(_, let error) = recorder.events.first else {
            Issue.record("expected update_failed, got \(recorder.events)")
            return
        }
        #expect(error.code == .notActive)
        #expect(!error.message.isEmpty, "says what was expected")
        #expect(lockdown.requests.count == 1)
    }

    @Test("end before began withdraws the session: failed(cancelled), released, unlocked")
    func endBeforeBegan() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        session.end()
        #expect(recorder.events.count == 1)
        guard case .failed(let error) = recorder.events.first else {
            Issue.record("expected failed, got \(recorder.events)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(lockdown.requests == [.begin(AssessmentConfiguration()), .release])
        #expect(!lockdown.isLocked)
        lockdown.dispatch()
        #expect(recorder.events.count == 1, "the began queued before the withdrawal is not heard")
    }

    @Test("releasing an active session ends it at once")
    func releaseEnds() {
        let lockdown = InMemoryAssessmentManager()
        var recorder: DelegateRecorder?
        do {
            let (session, sessionRecorder) = makeSession(lockdown)
            recorder = sessionRecorder
            session.begin()
            lockdown.dispatch()
            #expect(lockdown.isSessionActive)
        }
        #expect(lockdown.requests.last == .release)
        #expect(!lockdown.isLocked)
        #expect(recorder?.events == [.began])
        // Another session may begin now.
        let (next, nextRecorder) = makeSession(lockdown)
        next.begin()
        lockdown.dispatch()
        #expect(nextRecorder.events == [.began])
    }

    @Test("releasing a pending session ends it and drops its answer")
    func releasePending() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.nextBeginResult = .pending
        do {
            let (session, _) = makeSession(lockdown)
            session.begin()
            #expect(lockdown.isLocked)
        }
        #expect(!lockdown.isLocked)
        #expect(!lockdown.answerBegin(.began), "nothing is pending any more")
        #expect(lockdown.pendingEventCount == 0)
    }

    @Test("a pending begin is answered when the test says so")
    func pendingBegin() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.nextBeginResult = .pending
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        #expect(recorder.events.isEmpty)
        #expect(session.state == .beginning)
        #expect(lockdown.answerBegin(.failed(.timeout)))
        lockdown.dispatch()
        #expect(recorder.events.map(\.kind) == [.failed])
        #expect(!lockdown.isLocked)
    }

    @Test("a time limit under one tick is refused before anything is sent")
    func zeroTimeLimit() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown, AssessmentConfiguration(timeLimit: .zero))
        session.begin()
        guard case .failed(let error) = recorder.events.first else {
            Issue.record("expected failed, got \(recorder.events)")
            return
        }
        #expect(error.code == .unsupportedConfiguration)
        #expect(lockdown.requests.isEmpty)
    }

    @Test("a lost connection fails a pending session and interrupts then ends an active one")
    func connectionLost() {
        let lockdown = InMemoryAssessmentManager()
        let (active, activeRecorder) = makeSession(lockdown)
        active.begin()
        lockdown.dispatch()
        lockdown.loseConnection(message: "gone")
        lockdown.dispatch()
        #expect(activeRecorder.events == [
            .began, .interrupted(AssessmentError(.connection, message: "gone")), .ended,
        ])
        #expect(!lockdown.isLocked)

        lockdown.nextBeginResult = .pending
        let (pending, pendingRecorder) = makeSession(lockdown)
        pending.begin()
        lockdown.loseConnection(message: "gone")
        lockdown.dispatch()
        #expect(pendingRecorder.events == [.failed(AssessmentError(.connection, message: "gone"))])
    }

    @Test("the event stream yields what the delegate hears, and finishes after the terminal event")
    func eventStream() async {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        lockdown.interrupt(.administrative)
        lockdown.dispatch()
        session.end()
        lockdown.dispatch()
        var streamed: [AssessmentEvent] = []
        for await event in session.events { streamed.append(event) }
        #expect(streamed == recorder.events)
        #expect(streamed.count == 3)
    }

    @Test("wire reasons map to codes; values of later versions are other")
    func wireReasons() {
        #expect(AssessmentError.Code(failureReason: 1) == .alreadyActive)
        #expect(AssessmentError.Code(failureReason: 9) == .cancelled)
        #expect(AssessmentError.Code(failureReason: 0) == .other)
        #expect(AssessmentError.Code(failureReason: 42) == .other)
        #expect(AssessmentError.Code(interruptionReason: 3) == .timeLimit)
        #expect(AssessmentError.Code(interruptionReason: 99) == .other)
        #expect(AssessmentError.Code.alreadyActive.protocolName == "already_active")
        #expect(AssessmentError.Code.timeLimit.protocolName == "time_limit")
        #expect(AssessmentFeature(protocolName: "spell-check") == .spellCheck)
        #expect(AssessmentFeature(protocolName: "screen_reader") == .screenReader)
        #expect(AssessmentFeature(protocolName: "telepathy") == nil)
    }
}
