import CarrelCore
import Testing

@Suite("--assessment: the session begun on the app's behalf")
struct OnBehalfSessionTests {
    func session() -> OnBehalfSession { OnBehalfSession(appName: "foot", configuration: .mostRestrictive) }

    @Test("begins once, at the first app-role window")
    func beginsOnce() {
        var s = session()
        let untrusted = s.toplevelMapped(role: .untrusted)
        let participant = s.toplevelMapped(role: .participant)
        let app = s.toplevelMapped(role: .app)
        let again = s.toplevelMapped(role: .app)
        #expect(!untrusted && !participant && app && !again)
        #expect(s.phase == .beginning)
    }

    @Test("began is logged with the line tests and admins look for")
    func began() {
        var s = session()
        _ = s.toplevelMapped(role: .app)
        let reaction = s.heard(.began)
        #expect(reaction?.log.message == "session began (on behalf of foot)")
        #expect(reaction?.endApp == false)
        #expect(s.phase == .begun)
    }

    @Test("a session that fails to begin ends the app (fail closed)")
    func failed() {
        var s = session()
        _ = s.toplevelMapped(role: .app)
        let reaction = s.heard(.failed(.timeout, message: "no frame"))
        #expect(reaction?.endApp == true && reaction?.log.level == .error)
        #expect(s.phase == .over)
        let toEnd = s.appExited()
        #expect(!toEnd)
    }

    @Test("interrupted keeps the restrictions: the session still ends when the app exits")
    func interrupted() {
        var s = session()
        _ = s.toplevelMapped(role: .app)
        _ = s.heard(.began)
        let reaction = s.heard(.interrupted(.timeLimit, message: "time is up"))
        #expect(reaction?.endApp == false && reaction?.log.level == .warning)
        #expect(s.phase == .interrupted)
        let second = s.heard(.interrupted(.shutdown, message: "bye"))
        #expect(second == nil)
        let toEnd = s.appExited()
        #expect(toEnd)
        let ended = s.heard(.ended)
        #expect(ended?.log.message == "session ended (on behalf of foot)")
        let after = s.heard(.ended)
        #expect(after == nil)
    }

    @Test("an app that exits before any window has no session to end")
    func noWindow() {
        var s = session()
        let toEnd = s.appExited()
        let begins = s.toplevelMapped(role: .app)
        #expect(!toEnd && !begins)
    }
}
