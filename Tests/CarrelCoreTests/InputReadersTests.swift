import CarrelCore
import CarrelSystem
import Glibc
import Testing

@Suite("Input readers")
struct InputReadersTests {
    static let carrel: Int32 = 700
    static let own = InputDeviceHolder(pid: carrel, executable: "/usr/bin/carrel", command: "carrel",
                                       devices: ["/dev/input/event0", "/dev/input/event1"])
    static let logind = InputDeviceHolder(pid: 310, executable: "/usr/lib/systemd/systemd-logind", command: "systemd-logind",
                                          devices: ["/dev/input/event0", "/dev/input/event1"])
    static let seatd = InputDeviceHolder(pid: 305, executable: "/usr/bin/seatd", command: "seatd", devices: ["/dev/input/event0"])
    static let cat = InputDeviceHolder(pid: 912, executable: "/usr/bin/cat", command: "cat", devices: ["/dev/input/event0"])

    static func problem(_ holders: [InputDeviceHolder]?, omitted: UInt64 = 0, unreadable: String? = nil) -> String? {
        InputReaders.problem(holders: holders, omitted: omitted, unreadable: unreadable, carrelPID: carrel)
    }

    @Test("Carrel and the seat manager that opened its devices may hold them; nobody holding any is met too")
    func allowed() {
        #expect(Self.problem([]) == nil)
        #expect(Self.problem([Self.own, Self.logind]) == nil)
        #expect(Self.problem([Self.seatd, Self.own]) == nil)
        // logind replaced by an upgrade since it started is still logind.
        var upgraded = Self.logind
        upgraded.executable += " (deleted)"
        #expect(Self.problem([upgraded]) == nil)
        #expect(Self.problem([InputDeviceHolder(pid: 1, executable: "/lib/systemd/systemd-logind", command: "x", devices: [])]) == nil)
    }

    @Test("any other holder is a reader, named by pid, command, executable and device")
    func reader() throws {
        let message = try #require(Self.problem([Self.own, Self.logind, Self.cat]))
        #expect(message.hasPrefix("1 process(es) besides Carrel and the seat manager read the seat's input devices"))
        #expect(message.contains("pid 912 (cat, /usr/bin/cat) has /dev/input/event0 open"))
        #expect(!message.contains("systemd-logind") && !message.contains("pid 700"))
        let two = try #require(Self.problem([Self.cat, InputDeviceHolder(pid: 913, executable: "", command: "",
                                                                          devices: ["/dev/input/event1", "/dev/input/event2"])]))
        #expect(two.hasPrefix("2 process(es)"))
        #expect(two.contains("pid 913 (?, executable unknown) has /dev/input/event1, /dev/input/event2 open"))
    }

    @Test("a seat manager is known by its executable, not the command name a process can give itself")
    func namesAreNotTrusted() throws {
        let posing = InputDeviceHolder(pid: 914, executable: "/tmp/seatd", command: "systemd-logind", devices: ["/dev/input/event0"])
        let message = try #require(Self.problem([posing]))
        #expect(message.contains("pid 914 (systemd-logind, /tmp/seatd)"))
        let deletedElsewhere = InputDeviceHolder(pid: 915, executable: "/tmp/x (deleted)", command: "x", devices: ["/dev/input/event0"])
        #expect(Self.problem([deletedElsewhere]) != nil)
        // Carrel's pid is allowed, not its name.
        let another = InputDeviceHolder(pid: 916, executable: "/usr/bin/carrel", command: "carrel", devices: ["/dev/input/event0"])
        #expect(Self.problem([another]) != nil)
    }

    @Test("holders the helper's bounded answer left out are unmet: at most Carrel and a seat manager are allowed")
    func omitted() throws {
        let message = try #require(Self.problem([Self.own, Self.logind], omitted: 3))
        #expect(message.hasPrefix("3 process(es)") && message.contains("3 more process(es) not listed"))
    }

    @Test("holders that could not be read are unmet (fail closed), with why")
    func unreadable() throws {
        let message = try #require(Self.problem(nil, unreadable: "/proc/1/fd cannot be read (Permission denied)"))
        #expect(message.contains("cannot be read (/proc/1/fd cannot be read (Permission denied))"))
        #expect(message.contains("run Carrel as root or with --privileged-helper"))
    }

    @Test("the precondition fails a begin, is listed by its name, and can be waived for testing only")
    func precondition() {
        var o = EnvironmentObservation(policyFile: PreconditionsTests.safeFile, policyDirectory: PreconditionsTests.safeDir)
        o.carrelPID = Self.carrel
        o.inputDeviceHolders = [Self.own, Self.seatd]
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy()).isMet)
        o.inputDeviceHolders = [Self.own, Self.cat]
        let report = Preconditions.evaluate(o, policy: PreconditionPolicy())
        #expect(report.unmetKinds == [.inputReaders])
        #expect(report.failureMessage.contains("(1): input_readers: 1 process(es) besides Carrel"))
        #expect(report.failureMessage.contains("pid 912 (cat, /usr/bin/cat)"))
        let waived = Preconditions.evaluate(o, policy: PreconditionPolicy(waived: [.inputReaders]))
        #expect(waived.isMet && waived.notes.contains { $0.hasPrefix("input_readers waived by the policy (testing only): ") })
        o.inputDeviceHolders = nil
        o.inputDeviceHoldersUnreadable = "/proc cannot be read: No such file or directory"
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy()).unmetKinds == [.inputReaders])
        #expect(Precondition.waivable.contains(.inputReaders))
    }

    @Test("the helper's answer travels as one line and reads back the same; control characters are shown as ?")
    func wire() {
        let holders = [Self.logind, InputDeviceHolder(pid: 9, executable: "/tmp/a\tb", command: "k\"l\n", devices: ["/dev/input/event3"])]
        let line = PrivilegedReply.holders(holders, omitted: 0).line
        #expect(!line.contains("\n"))
        guard case .holders(let back, let omitted)? = PrivilegedReply.parse(Array(line.utf8)) else {
            Issue.record("not read back: \(line)")
            return
        }
        #expect(omitted == 0 && back.count == 2 && back[0] == Self.logind)
        #expect(back[1] == InputDeviceHolder(pid: 9, executable: "/tmp/a?b", command: "k?l?", devices: ["/dev/input/event3"]))
        // More than the answer lists: counted, so Carrel still refuses.
        let many = (1...20).map { InputDeviceHolder(pid: Int32($0), executable: String(repeating: "x", count: 400), command: "c",
                                                     devices: (0..<20).map { "/dev/input/event\($0)" }) }
        let long = PrivilegedReply.holders(many, omitted: 0).line
        #expect(long.utf8.count <= PrivilegedReply.maximumLineLength)
        guard case .holders(let listed, let more)? = PrivilegedReply.parse(Array(long.utf8)) else {
            Issue.record("a long answer was not read back")
            return
        }
        #expect(listed.count == InputDeviceHolder.maximumListed && more == 12)
        #expect(PrivilegedRequest.parse(Array(PrivilegedRequest.inputReaders.line.utf8), subtree: "") == .success(.inputReaders))
        #expect(PrivilegedReply.parse(Array(#"{"holders":["x"],"ok":"yes","omitted":0}"#.utf8)) == nil)
    }
}

@Suite("Input device scan")
struct InputDeviceScanTests {
    @Test("the scan reads every process, or says which it could not: never a partial list; this test holds no input device")
    func scansEveryProcessOrFails() {
        switch InputDeviceScan.holders() {
        case .success(let holders):
            #expect(!holders.contains { $0.pid == getpid() })
        case .failure(let failure):
            // Not root, or root without a capability a process has (a container's init).
            #expect(failure.message.contains("cannot be read"))
            #expect(failure.message.contains("/proc/"))
        }
    }
}
