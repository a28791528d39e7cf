import CarrelCore
import Testing

@Suite("Which windows a session shows")
struct WindowVisibilityTests {
    let owner = ClientID(1)
    let other = ClientID(2)

    func restrictions(participants: [String] = []) -> RestrictionSet {
        var policy = SessionPolicy()
        policy.knownParticipants = Set(participants)
        return RestrictionSet(session: SessionID(1), owner: owner,
                              configuration: AssessmentConfiguration(participants: participants), policy: policy)
    }

    @Test("the owner's windows are shown, whatever its role")
    func ownerShown() {
        for role in Role.allCases {
            #expect(restrictions().shows(WindowOwner(client: owner, role: role)))
        }
    }

    @Test("every other client is hidden, including other app-role clients", arguments: Role.allCases)
    func othersHidden(role: Role) {
        #expect(!restrictions().shows(WindowOwner(client: other, role: role)))
    }

    @Test("a participant is shown only when the configuration names its id")
    func participants() {
        let set = restrictions(participants: ["calculator"])
        #expect(set.shows(WindowOwner(client: other, role: .participant, participantID: "calculator")))
        #expect(!set.shows(WindowOwner(client: other, role: .participant, participantID: "browser")))
        #expect(!set.shows(WindowOwner(client: other, role: .participant, participantID: nil)))
        // An untrusted client cannot pass as a participant by its id alone.
        #expect(!set.shows(WindowOwner(client: other, role: .untrusted, participantID: "calculator")))
    }

    @Test("the audit finds exactly the enabled windows the session hides")
    func audit() {
        let entries = [
            SceneAudit.Entry(window: WindowID(1), owner: WindowOwner(client: owner, role: .app), isEnabled: true),
            SceneAudit.Entry(window: WindowID(2), owner: WindowOwner(client: other, role: .untrusted), isEnabled: true),
            SceneAudit.Entry(window: WindowID(3), owner: WindowOwner(client: other, role: .untrusted), isEnabled: false),
            SceneAudit.Entry(window: WindowID(4), owner: WindowOwner(client: ClientID(3), role: .app), isEnabled: true),
        ]
        #expect(SceneAudit.violations(entries, under: restrictions()) == [WindowID(2), WindowID(4)])
        #expect(SceneAudit.violations(entries, under: nil).isEmpty)
    }
}
