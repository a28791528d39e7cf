import CarrelAudit
import Glibc
import Testing

@Suite("Audit log hash chain")
struct AuditChainTests {
    /// A log of `n` records as its file text.
    static func log(_ n: Int, session: UInt64 = 1, run: String = "r1") -> (text: String, chain: AuditChain) {
        var chain = AuditChain(resumingAfter: nil)
        var text = ""
        for i in 0..<n {
            let record = AuditRecord(time: "2026-11-23T10:00:0\(i % 10).000Z", run: run, event: i == 0 ? "begin" : "blocked",
                                     session: session, role: "app", pid: 42, kind: i == 0 ? nil : "clipboard", detail: "record \(i)")
            text += chain.append(record) + "\n"
        }
        return (text, chain)
    }

    @Test("a written log verifies: every record counted, the head is the last line's hash")
    func intact() {
        let (text, chain) = Self.log(20)
        let report = AuditVerifier.verify(text[...])
        #expect(report.isIntact && report.records == 20 && !report.continuesEarlierLog)
        #expect(report.head == chain.head && chain.seq == 20)
        #expect(AuditRecord.parse(text.split(separator: "\n")[0])?.prev == AuditChain.genesis)
    }

    @Test("one changed byte anywhere but the last line is found, at its line", arguments: [1, 7, 19])
    func editedByte(line: Int) {
        var lines = Self.log(20).text.split(separator: "\n").map(String.init)
        // Change one digit of the detail: still valid JSON, only the chain shows it.
        lines[line - 1] = lines[line - 1].replacingOccurrences(of: "record \(line - 1)\"", with: "record \(line + 100)\"")
        let report = AuditVerifier.verify((lines.joined(separator: "\n") + "\n")[...])
        #expect(report.broken?.line == line)
        #expect(report.records == line - 1)
    }

    @Test("a byte that breaks the JSON is found at its line; a removed line by the seq jump")
    func brokenJSONAndRemoval() {
        var lines = Self.log(10).text.split(separator: "\n").map(String.init)
        var torn = lines
        torn[4].removeLast()
        #expect(AuditVerifier.verify((torn.joined(separator: "\n") + "\n")[...]).broken?.line == 5)
        lines.remove(at: 3)
        let report = AuditVerifier.verify((lines.joined(separator: "\n") + "\n")[...])
        #expect(report.broken?.line == 4 && report.broken?.reason.contains("seq jumps from 3 to 5") == true)
    }

    @Test("a file that ends inside a line is reported as incomplete there")
    func tornTail() {
        let text = Self.log(3).text + "{\"seq\":4"
        let report = AuditVerifier.verify(text[...])
        #expect(report.broken?.line == 4 && report.records == 3)
    }

    @Test("resuming after an existing log continues seq and the chain across restarts")
    func resume() {
        let (first, chain) = Self.log(3, run: "r1")
        let (last, torn) = AuditChain.lastLine(of: first[...])
        #expect(!torn)
        var resumed = AuditChain(resumingAfter: last)
        #expect(resumed.seq == 3 && resumed.head == chain.head)
        let text = first + resumed.append(AuditRecord(time: "t", run: "r2", event: "started")) + "\n"
        let report = AuditVerifier.verify(text[...])
        #expect(report.isIntact && report.records == 4)
    }

    /// Texts whose reports the walk must reproduce piece by piece: intact,
    /// a changed line, a removed one, a torn tail, a continued log, nothing.
    static func walkCases() -> [String] {
        let text = log(12).text
        var lines = text.split(separator: "\n").map(String.init)
        var changed = lines
        changed[5] = changed[5].replacingOccurrences(of: "record 5\"", with: "record 50\"")
        lines.remove(at: 8)
        let continued = text.split(separator: "\n").dropFirst(4).joined(separator: "\n") + "\n"
        return [text, changed.joined(separator: "\n") + "\n", lines.joined(separator: "\n") + "\n",
                text + "{\"seq\":13", continued, ""]
    }

    @Test("fed in pieces of any size, the walk reports what verifying the whole text does",
          arguments: [1, 2, 7, 64, 4096])
    func walkInPieces(size: Int) {
        for text in Self.walkCases() {
            let bytes = Array(text.utf8)
            var walk = AuditVerifier.Walk()
            var start = 0
            while start < bytes.count {
                walk.feed(bytes[start..<min(start + size, bytes.count)])
                start += size
            }
            #expect(walk.finish() == AuditVerifier.verify(text[...]), "pieces of \(size)")
        }
        // The cases differ: a walk that reported nothing would not pass.
        #expect(Set(Self.walkCases().map { AuditVerifier.verify($0[...]).broken?.line }).count == 4)
    }

    @Test("read from an open file, 64 KiB at a time: the whole file, a length fixed earlier, a file cut short")
    func walkFromFile() throws {
        let text = Self.log(800).text  // about 150 KB: several reads
        let path = "/tmp/carrel-audit-walk-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        let bytes = Array(text.utf8)
        try #require(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        #expect(bytes.count > 2 * 65536)
        #expect(try AuditVerifier.verify(fileDescriptor: fd).get() == AuditVerifier.verify(text[...]))
        // What the file held at a moment: a length that ends inside a line is a torn tail there.
        let cut = bytes.count / 2
        let prefix = String(decoding: bytes[..<cut], as: UTF8.self)
        let report = try AuditVerifier.verify(fileDescriptor: fd, length: cut).get()
        #expect(report == AuditVerifier.verify(prefix[...]) && report.broken != nil)
        #expect(AuditVerifier.verify(fileDescriptor: fd, length: bytes.count + 1)
                == .failure(FileReadError("the file became shorter while it was read")))
        #expect(throws: FileReadError.self) { try AuditVerifier.verify(fileDescriptor: -1).get() }
    }

    @Test("a line longer than any record stops the walk instead of being held")
    func walkLongLine() {
        var walk = AuditVerifier.Walk()
        walk.feed(Array(Self.log(2).text.utf8))
        let piece = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        for _ in 0...(AuditVerifier.Walk.longestLine / piece.count) { walk.feed(piece) }
        #expect(walk.isBroken)
        let report = walk.finish()
        #expect(report.broken?.line == 3 && report.records == 2)
        #expect(report.broken?.reason.contains("without a line break") == true)
    }

    @Test("a session's story is its records in its run: the last run that has it unless a run is named")
    func story() {
        let one = Self.log(3, session: 1, run: "r1").text
        var chain = AuditChain(resumingAfter: AuditChain.lastLine(of: one[...]).line)
        var text = one
        for (session, event) in [(1, "begin"), (2, "begin"), (1, "ended")] {
            text += chain.append(AuditRecord(time: "t", run: "r2", event: event, session: UInt64(session))) + "\n"
        }
        #expect(AuditStory.records(in: text[...], session: 1).map(\.event) == ["begin", "ended"])
        #expect(AuditStory.records(in: text[...], session: 1, run: "r1").count == 3)
        #expect(AuditStory.records(in: text[...], session: 9).isEmpty)
        let line = AuditStory.describe(AuditRecord(time: "T", run: "r", event: "failed", role: "app", pid: 7, reason: "timeout", detail: "no frame"))
        #expect(line == "T failed role=app pid=7 reason=timeout — no frame")
    }
}
