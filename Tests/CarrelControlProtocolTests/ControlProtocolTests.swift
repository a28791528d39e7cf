import CarrelControlProtocol
import Testing

/// The admin control socket's words: request parsing and its limits, and
/// the access rule (what the compositor does with a request is tested in
/// CarrelCoreTests' ControlTests).
@Suite("Control protocol")
struct ControlProtocolTests {
    func parse(_ text: String) -> Result<ControlRequest, ControlFailure> {
        ControlRequest.parse(Array(text.utf8))
    }

    // MARK: - Requests

    @Test("well-formed requests parse, and what carrelctl sends parses back to itself")
    func requestsRoundTrip() throws {
        #expect(try parse(#"{"command":"status"}"#).get() == .status)
        #expect(try parse(#"{"command":"end","reason":"fire alarm"}"#).get() == .end(reason: "fire alarm"))
        #expect(try parse(#"{"command":"extend","minutes":15}"#).get() == .extend(minutes: 15))
        for request in [ControlRequest.status, .end(reason: "proctor: \"quoted\" ünïcode"), .extend(minutes: 600)] {
            #expect(try parse(request.line).get() == request)
            #expect(!request.line.contains("\n"))
        }
        #expect(try parse(#"{"command":"end","reason":"  padded  "}"#).get() == .end(reason: "padded"))
    }

    @Test("bad requests are refused with a code and a message saying what is allowed",
          arguments: [
            ("", ControlFailureCode.badRequest, "JSON object"),
            ("status", .badRequest, "JSON object"),
            (#"{"verb":"status"}"#, .badRequest, "\"command\""),
            (#"{"command":7}"#, .badRequest, "\"command\""),
            (#"{"command":"reboot"}"#, .unknownCommand, "known: status, end, extend"),
            (#"{"command":"re\nboot"}"#, .unknownCommand, "\"re?boot\""),
            (#"{"command":"end"}"#, .badRequest, "needs a \"reason\""),
            (#"{"command":"end","reason":"   "}"#, .badArgument, "empty"),
            (#"{"command":"end","reason":"two\nlines"}"#, .badArgument, "control characters"),
            (#"{"command":"extend"}"#, .badRequest, "1 to 600"),
            (#"{"command":"extend","minutes":0}"#, .badArgument, "1 to 600"),
            (#"{"command":"extend","minutes":601}"#, .badArgument, "1 to 600"),
            (#"{"command":"extend","minutes":-5}"#, .badArgument, "1 to 600"),
            (#"{"command":"extend","minutes":"5"}"#, .badRequest, "JSON object"),
            (#"{"command":"extend","minutes":1.5}"#, .badRequest, "JSON object"),
          ])
    func badRequests(line: String, code: ControlFailureCode, mention: String) {
        guard case .failure(let failure) = parse(line) else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(failure.code == code, "\(line): \(failure)")
        #expect(failure.message.contains(mention), "\(line): \(failure.message)")
    }

    @Test("a request longer than the limit or a reason over its limit is refused")
    func sizeLimits() {
        let long = #"{"command":"status","pad":""# + String(repeating: "x", count: ControlRequest.maximumLineLength) + #""}"#
        guard case .failure(let failure) = parse(long) else { Issue.record("accepted"); return }
        #expect(failure.code == .badRequest && failure.message.contains("limit"))
        let reason = String(repeating: "r", count: ControlRequest.maximumReasonLength + 1)
        guard case .failure(let tooLong) = ControlRequest.validateReason(reason) else { Issue.record("accepted"); return }
        #expect(tooLong.code == .badArgument)
    }

    // MARK: - Access

    @Test("as root without a group: only root")
    func rootOnly() {
        let rule = ControlAccess(serverUID: 0, groupID: nil)
        #expect(rule.layout.directoryMode == 0o700 && rule.layout.socketMode == 0o600 && rule.layout.group == nil)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 0, gid: 0)).isAllowed)
        let refused = rule.decide(PeerCredentials(pid: 9, uid: 65534, gid: 65534, groups: [0]))
        guard case .refused(let message) = refused else { Issue.record("nobody allowed"); return }
        #expect(message.contains("uid 65534") && message.contains("not root"), "\(message)")
    }

    @Test("as root with a group: root and members (primary or supplementary)")
    func rootAndGroup() {
        let rule = ControlAccess(serverUID: 0, groupID: 27)
        #expect(rule.layout.directoryMode == 0o750 && rule.layout.socketMode == 0o660 && rule.layout.group == 27)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 1000, gid: 27)).isAllowed)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 1000, gid: 1000, groups: [4, 27])).isAllowed)
        #expect(!rule.decide(PeerCredentials(pid: 1, uid: 1000, gid: 1000, groups: [4, 28])).isAllowed)
    }

    @Test("unprivileged: Carrel's own user (and root); a group in the policy is ignored")
    func unprivileged() {
        let rule = ControlAccess(serverUID: 1000, groupID: 27)
        #expect(rule.groupID == nil)
        #expect(rule.layout.socketMode == 0o600)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 1000, gid: 1000)).isAllowed)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 0, gid: 0)).isAllowed)
        #expect(!rule.decide(PeerCredentials(pid: 1, uid: 1001, gid: 27, groups: [27])).isAllowed)
    }

    @Test("unprivileged but a member of the group (the privilege-separated kiosk): its user, root and members")
    func unprivilegedMember() {
        let rule = ControlAccess(serverUID: 999, groupID: 27, serverGroups: [994, 27])
        #expect(rule.groupID == 27)
        #expect(rule.layout.directoryMode == 0o750 && rule.layout.socketMode == 0o660 && rule.layout.group == 27)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 999, gid: 994)).isAllowed)
        #expect(rule.decide(PeerCredentials(pid: 1, uid: 1001, gid: 1001, groups: [27])).isAllowed)
        #expect(!rule.decide(PeerCredentials(pid: 1, uid: 1001, gid: 1001, groups: [28])).isAllowed)
        #expect(ControlAccess(serverUID: 999, groupID: 27, serverGroups: [994]).groupID == nil)
    }

    @Test("supplementary groups come from the Groups: line of /proc/PID/status")
    func procStatusGroups() {
        let status = "Name:\tcarrelctl\nUid:\t1000\t1000\t1000\t1000\nGroups:\t4 24 27 100 \nNStgid:\t5\n"
        #expect(ControlAccess.supplementaryGroups(fromProcStatus: status) == [4, 24, 27, 100])
        #expect(ControlAccess.supplementaryGroups(fromProcStatus: "Name:\tx\nGroups:\t\n") == [])
        #expect(ControlAccess.supplementaryGroups(fromProcStatus: "Name:\tx\n") == nil)
        #expect(ControlAccess.supplementaryGroups(fromProcStatus: "Groups:\t4 x\n") == nil)
    }
}
