import CarrelCore
import Testing

/// App-requested lock (ASAM): who may ask, for what, the on-screen
/// confirmation phase and the banner at `began`.
@Suite("App-requested lock")
struct AppLockTests {
    let exam = "/opt/exam/bin/exam"
    let client = ClientID(9)
    let id = SessionID(1)
    let t0 = Instant.seconds(100)
    var lockOnly: AssessmentConfiguration { AssessmentConfiguration(allowedFeatures: Set(AssessmentFeature.allCases)) }

    func invigilator(confirm: Bool = false, banner: Duration = .zero) -> Invigilator {
        Invigilator(policy: SessionPolicy(defaultTimeLimit: 5400),
                    appLock: AppLockPolicy(allowedExecutables: [exam], requireConfirmation: confirm, bannerDuration: banner),
                    confirmationTimeout: .seconds(60))
    }

    // MARK: Entitlement

    @Test("only allowlisted absolute paths are entitled; unknown executables never")
    func entitlement() {
        let policy = AppLockPolicy(allowedExecutables: [exam])
        #expect(policy.entitles(executable: exam))
        #expect(!policy.entitles(executable: "/usr/bin/python3"))
        #expect(!policy.entitles(executable: nil))
        #expect(!policy.entitles(executable: "exam"), "a relative name is never a realpath")
        #expect(!AppLockPolicy().entitles(executable: exam), "the built-in policy allows no app")
    }

    @Test("lock-only means every feature allowed and no participant")
    func lockOnlyConfiguration() {
        #expect(AppLock.isLockOnly(lockOnly))
        #expect(AppLock.isLockOnly(AssessmentConfiguration(allowedFeatures: Set(AssessmentFeature.allCases), timeLimit: 60)))
        #expect(!AppLock.isLockOnly(.mostRestrictive))
        var missingOne = lockOnly
        missingOne.allowedFeatures.remove(.screenReader)
        #expect(!AppLock.isLockOnly(missingOne))
        var withParticipant = lockOnly
        withParticipant.participants = ["calculator"]
        #expect(!AppLock.isLockOnly(withParticipant))
    }

    @Test("the assessment global is visible to an entitled untrusted client, and nothing else is granted")
    func globalVisibility() {
        let access = GlobalAccess.standard
        let manager = "carrel_assessment_manager_v1"
        #expect(access.decision(interface: manager, role: .untrusted) == .hidden(.notForRole))
        #expect(access.decision(interface: manager, role: .untrusted, appLockEntitled: true) == .visible)
        #expect(access.decision(interface: "zwlr_virtual_pointer_manager_v1", role: .untrusted, appLockEntitled: true)
            == .hidden(.privileged))
        #expect(access.decision(interface: "zwlr_screencopy_manager_v1", role: .untrusted, appLockEntitled: true)
            == .hidden(.notForRole))
        #expect(access.decision(interface: "not_a_global", role: .untrusted, appLockEntitled: true) == .hidden(.unclassified))
        #expect(access.decision(interface: manager, role: .app) == .visible, "the app keeps its rights")
    }

    @Test("an allowlisted untrusted client begins a lock-only session; its windows stay, other untrusted ones go")
    func allowlistedBegins() {
        var invigilator = invigilator()
        let begin = invigilator.begin(id, client: client, role: .untrusted, executable: exam, surface: .mappedToplevel,
                                      configuration: lockOnly, now: t0)
        guard case .applyRestrictions(let set)? = begin.withoutLogs.last else {
            Issue.record("no restrictions requested: \(begin)")
            return
        }
        #expect(set.ownerRole == .untrusted)
        #expect(set.showsUntrustedLayer, "the owner's windows live in the untrusted layer")
        #expect(set.shows(WindowOwner(client: client, role: .untrusted)))
        #expect(!set.shows(WindowOwner(client: ClientID(10), role: .untrusted)))
        #expect(!set.shows(WindowOwner(client: ClientID(11), role: .app)), "the app is hidden during the lock")
        #expect(invigilator.session(id)?.appLockExecutable == exam)
        _ = invigilator.restrictionsApplied(id, .applied, now: t0)
        let presented = invigilator.framePresented(id, now: t0)
        #expect(presented.events(on: id) == [.began])
        #expect(!presented.withoutLogs.contains { if case .showBanner = $0 { true } else { false } }, "banner off by default")
    }

    @Test("an app session keeps hiding the untrusted layer whole")
    func appSessionHidesLayer() {
        let set = RestrictionSet(session: id, owner: client, configuration: .mostRestrictive, policy: SessionPolicy())
        #expect(!set.showsUntrustedLayer)
    }

    @Test("an allowlisted client asking for anything but lock-only fails not_entitled",
          arguments: [nil, AssessmentConfiguration(allowedFeatures: [.spellCheck]),
                      AssessmentConfiguration(allowedFeatures: Set(AssessmentFeature.allCases), participants: ["calc"])])
    func allowlistedNotLockOnly(configuration: AssessmentConfiguration?) {
        var invigilator = invigilator()
        let effects = invigilator.begin(id, client: client, role: .untrusted, executable: exam, surface: .mappedToplevel,
                                        configuration: configuration, now: t0)
        guard case .failed(.notEntitled, let message)? = effects.events(on: id).first else {
            Issue.record("expected failed(not_entitled): \(effects)")
            return
        }
        #expect(message.contains("lock-only"))
        #expect(invigilator.lockState == .inactive)
        #expect(effects.appliedSets.isEmpty)
    }

    @Test("an untrusted client not on the list fails not_entitled, lock-only or not")
    func notAllowlisted() {
        var invigilator = invigilator()
        let effects = invigilator.begin(id, client: client, role: .untrusted, executable: "/usr/bin/python3",
                                        surface: .mappedToplevel, configuration: lockOnly, now: t0)
        #expect(effects.events(on: id) == [.failed(.notEntitled, message: "clients of role untrusted may not begin sessions")])
        #expect(effects.appliedSets.isEmpty)
    }

    @Test("the app role's sessions are unchanged by the app-lock policy: no confirmation, no banner")
    func appRoleUnchanged() {
        var invigilator = invigilator(confirm: true, banner: .seconds(5))
        _ = invigilator.begin(id, client: client, role: .app, executable: exam, surface: .mappedToplevel, configuration: nil, now: t0)
        #expect(invigilator.session(id)?.appLockExecutable == nil)
        let applied = invigilator.restrictionsApplied(id, .applied, now: t0)
        #expect(applied.withoutLogs == [.startPresentationWait(id, deadline: t0.advanced(by: .seconds(3)))])
        #expect(invigilator.framePresented(id, now: t0).withoutLogs.count == 3)
    }

    // MARK: Confirmation

    func asking() -> Invigilator {
        var invigilator = invigilator(confirm: true)
        _ = invigilator.begin(id, client: client, role: .untrusted, executable: exam, surface: .mappedToplevel,
                              configuration: lockOnly, now: t0)
        let applied = invigilator.restrictionsApplied(id, .applied, now: t0)
        #expect(applied.withoutLogs == [.askConfirmation(
            id, prompt: "Lock this computer to exam? Press Y to allow, N or Escape to refuse", deadline: t0.advanced(by: .seconds(60)))])
        #expect(invigilator.session(id)?.phase == .awaitingConfirmation(deadline: t0.advanced(by: .seconds(60))))
        #expect(invigilator.restrictionsInForce != nil, "restrictions hold while asking")
        #expect(invigilator.lockState == .active)
        return invigilator
    }

    @Test("Y: the prompt goes, then the frame wait, then began")
    func confirmed() {
        var invigilator = asking()
        #expect(invigilator.framePresented(id, now: t0).isEmpty, "no began while asking")
        let later = t0.advanced(by: .seconds(4))
        let yes = invigilator.confirmationAnswered(id, allowed: true, now: later)
        #expect(yes.withoutLogs == [.dismissConfirmation(id), .startPresentationWait(id, deadline: later.advanced(by: .seconds(3)))])
        #expect(invigilator.framePresented(id, now: later).events(on: id) == [.began])
    }

    @Test("N or Escape: failed(not_entitled) \"refused at the machine\", everything reverted")
    func refused() {
        var invigilator = asking()
        let no = invigilator.confirmationAnswered(id, allowed: false, now: t0)
        #expect(no.withoutLogs == [.clearSelections, .revertRestrictions(id), .dismissConfirmation(id),
                                   .lockStateChanged(.inactive), .send(id, .failed(.notEntitled, message: "refused at the machine"))])
        #expect(invigilator.restrictionsInForce == nil)
        #expect(invigilator.confirmationAnswered(id, allowed: true, now: t0).withoutLogs.isEmpty, "a late answer is ignored")
    }

    @Test("no answer by the deadline is a refusal; an early timer is re-armed")
    func timeout() {
        var invigilator = asking()
        let deadline = t0.advanced(by: .seconds(60))
        let early = invigilator.confirmationDeadlinePassed(id, now: t0.advanced(by: .seconds(59)))
        #expect(early.withoutLogs.count == 1)
        #expect(invigilator.session(id)?.phase == .awaitingConfirmation(deadline: deadline))
        let late = invigilator.confirmationDeadlinePassed(id, now: deadline)
        guard case .failed(.notEntitled, let message)? = late.events(on: id).first else {
            Issue.record("expected failed(not_entitled): \(late)")
            return
        }
        #expect(message.hasPrefix("no answer"))
        #expect(late.withoutLogs.contains(.dismissConfirmation(id)))
        #expect(invigilator.lockState == .inactive)
    }

    @Test("destroy or disconnect while asking: the prompt goes, nothing is sent")
    func destroyedWhileAsking() {
        var a = asking()
        let destroyed = a.destroy(id)
        #expect(destroyed.withoutLogs == [.clearSelections, .revertRestrictions(id), .dismissConfirmation(id), .lockStateChanged(.inactive)])
        var b = asking()
        let gone = b.clientDisconnected(client)
        #expect(gone.withoutLogs == destroyed.withoutLogs)
        #expect(b.sessions.isEmpty)
    }

    @Test("a prompt that cannot be shown fails the session (closed), with the prompt's own reason")
    func promptUnavailable() {
        var invigilator = asking()
        let effects = invigilator.confirmationUnavailable(id, "no output")
        guard case .failed(.internal, let message)? = effects.events(on: id).first else {
            Issue.record("expected failed(internal): \(effects)")
            return
        }
        #expect(message.contains("no output"))
        #expect(effects.withoutLogs.contains(.revertRestrictions(id)))
        #expect(invigilator.lockState == .inactive)
    }

    @Test("end and update before the answer are protocol errors, as before began")
    func endWhileAsking() {
        var invigilator = asking()
        #expect(invigilator.end(id).protocolErrors == [.notBegun(id)])
        #expect(invigilator.update(id, to: lockOnly).protocolErrors == [.notBegun(id)])
    }

    // MARK: Banner

    @Test("the banner goes up at began for its duration and comes down when the session is released")
    func banner() {
        var invigilator = invigilator(banner: .seconds(5))
        _ = invigilator.begin(id, client: client, role: .untrusted, executable: exam, surface: .mappedToplevel,
                              configuration: lockOnly, now: t0)
        _ = invigilator.restrictionsApplied(id, .applied, now: t0)
        let presented = invigilator.framePresented(id, now: t0)
        #expect(presented.withoutLogs.last == .showBanner(id, text: "Exam mode: exam — time limit 1 h 30 min",
                                                          until: t0.advanced(by: .seconds(5))))
        #expect(presented.events(on: id) == [.began], "began goes out before the banner is drawn")
        #expect(invigilator.end(id).withoutLogs.contains(.hideBanner(id)))
    }

    @Test("time limits read as people say them")
    func durations() {
        #expect(AppLock.formatDuration(seconds: 5400) == "1 h 30 min")
        #expect(AppLock.formatDuration(seconds: 7200) == "2 h")
        #expect(AppLock.formatDuration(seconds: 45 * 60) == "45 min")
        #expect(AppLock.formatDuration(seconds: 65) == "1 min 5 s")
        #expect(AppLock.formatDuration(seconds: 30) == "30 s")
        #expect(AppLock.formatDuration(seconds: 3601) == "1 h")
        #expect(AppLock.formatDuration(seconds: 0) == "0 s")
        #expect(AppLock.bannerText(app: "exam", timeLimit: 8 * 3600) == "Exam mode: exam — time limit 8 h")
    }

    @Test("the app is named by the executable's file name")
    func appName() {
        #expect(AppLock.appName(executable: "/opt/exam/bin/exam-python") == "exam-python")
        #expect(AppLock.appName(executable: "/") == "/")
    }

    @Test("Y allows, N and Escape refuse, other keys are no answer")
    func keys() {
        #expect(AppLock.answer(forPressed: [AppLock.Keysym.y]) == true)
        #expect(AppLock.answer(forPressed: [AppLock.Keysym.n]) == false)
        #expect(AppLock.answer(forPressed: [AppLock.Keysym.escape]) == false)
        #expect(AppLock.answer(forPressed: [0x61]) == nil)
        #expect(AppLock.answer(forPressed: []) == nil)
    }

    @Test("banner at the top centre of the primary output; prompt in its centre; both clamped")
    func placement() {
        let output = Rect(x: 1280, y: 0, width: 1920, height: 1080)
        #expect(AppLock.bannerPlacement(output: output, size: Size(width: 600, height: 60))
            == Rect(x: 1280 + 660, y: 24, width: 600, height: 60))
        #expect(AppLock.promptPlacement(output: output, size: Size(width: 800, height: 200))
            == Rect(x: 1280 + 560, y: 440, width: 800, height: 200))
        #expect(AppLock.bannerPlacement(output: Rect(x: 0, y: 0, width: 300, height: 50), size: Size(width: 600, height: 60))
            == Rect(x: 0, y: 0, width: 300, height: 50))
    }
}
