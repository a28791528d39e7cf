import CarrelControlProtocol
import Testing

@Suite("SSH forced command")
struct SSHForcedCommandTests {
    func request(_ original: String?) -> Result<ControlRequest, ControlFailure> {
        SSHForcedCommand.request(from: original)
    }

    @Test("status, extend and end with the session they mean become control requests")
    func allowed() throws {
        #expect(try request("status").get() == .status)
        #expect(try request("extend 3 15").get() == .extend(minutes: 15, session: 3))
        #expect(try request("  extend\t3   15 ").get() == .extend(minutes: 15, session: 3))
        #expect(try request("end 3 fire alarm in hall B").get() == .end(reason: "fire alarm in hall B", session: 3))
        // Nothing is a shell: quotes and semicolons are part of the reason.
        #expect(try request("end 3 'over'; rm -rf /").get() == .end(reason: "'over'; rm -rf /", session: 3))
        // The session travels to Carrel, which does the compare-and-set.
        #expect(ControlRequest.extend(minutes: 15, session: 3).line == #"{"command":"extend","minutes":15,"session":3}"#)
        #expect(try ControlRequest.parse(Array(ControlRequest.end(reason: "x", session: 9).line.utf8)).get() == .end(reason: "x", session: 9))
    }

    @Test("anything else is refused with what the key may run", arguments: [
        (nil, ControlFailureCode.badRequest, "interactive login"),
        ("", .badRequest, "empty"),
        ("bash", .unknownCommand, "\"bash\" is not allowed"),
        ("reload", .unknownCommand, "not allowed"),
        ("unlock 1234", .unknownCommand, "not allowed"),
        ("status now", .badArgument, "nothing after it"),
        ("extend 15", .badArgument, "session and minutes"),
        ("extend x 15", .badArgument, "not a session number"),
        ("extend 3 lots", .badArgument, "not a whole number of minutes"),
        ("extend 3 601", .badArgument, "600"),
        ("end 3", .badArgument, "session and a reason"),
        ("end -1 over", .badArgument, "not a session number"),
    ] as [(String?, ControlFailureCode, String)])
    func refused(original: String?, code: ControlFailureCode, says: String) {
        guard case .failure(let failure) = request(original) else {
            Issue.record("\(original ?? "nil") was accepted")
            return
        }
        #expect(failure.code == code, "\(failure)")
        #expect(failure.message.contains(says), "\(failure.message)")
        #expect(failure.message.contains("status | extend SESSION MINUTES | end SESSION REASON")
                || code == .badArgument && (says.contains("minutes") || says == "600"), "\(failure.message)")
    }

    @Test("the key's name travels with the request as its actor and comes back out of the line")
    func actorTravels() throws {
        let request = ControlRequest.extend(minutes: 10, session: 1)
        let line = request.line(actor: "alice@room-b12")
        #expect(line == #"{"actor":"alice@room-b12","command":"extend","minutes":10,"session":1}"#)
        let parsed = try ControlRequest.parseNamingActor(Array(line.utf8)).get()
        #expect(parsed.request == request && parsed.actor == "alice@room-b12")
        // Without one, the line is as before and names no actor.
        #expect(request.line == #"{"command":"extend","minutes":10,"session":1}"#)
        #expect(try ControlRequest.parseNamingActor(Array(request.line.utf8)).get().actor == nil)
    }

    @Test("an actor that is not one word of the allowed characters is refused", arguments: [
        ("", "empty"),
        ("alice bob", "a character other than"),
        ("eve\n{\"event\":\"x\"}", "a character other than"),
        ("ünïcode", "a character other than"),
        (String(repeating: "a", count: 65), "the limit is 64"),
    ])
    func badActor(name: String, says: String) {
        guard case .failure(let failure) = ControlActor.validate(name) else {
            Issue.record("\(name) was accepted")
            return
        }
        #expect(failure.code == .badArgument && failure.message.contains(says), "\(failure.message)")
        // The same name inside a request line, as JSON escapes it.
        let escaped = name.unicodeScalars.map { $0 == "\n" ? "\\n" : $0 == "\"" ? "\\\"" : String($0) }.joined()
        let line = #"{"command":"status","actor":""# + escaped + #""}"#
        guard case .failure(let onTheWire) = ControlRequest.parse(Array(line.utf8)) else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(onTheWire.code == .badArgument, "\(onTheWire)")
    }

    @Test("names of keys as admins write them are accepted as they are")
    func goodActor() throws {
        for name in ["alice@room-b12", "invigilator.b12+2", "ops:seat-07", String(repeating: "z", count: 64)] {
            #expect(try ControlActor.validate(name).get() == name)
        }
    }
}
