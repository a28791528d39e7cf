import CarrelJournalFormat
import Foundation
import Testing

@Suite("Journal entries")
struct JournalEntryTests {
    @Test("an audit record becomes structured fields with its event's MESSAGE_ID")
    func fields() {
        let entry = JournalEntry(event: "admin", session: 3, cause: "done", kind: nil, count: nil, actor: "alice@room-b12",
                                 seq: 42, hash: String(repeating: "ab", count: 32), role: "admin", pid: 77,
                                 detail: "carrelctl extend by pid 77 uid 0", run: "5c0e")
        #expect(entry["MESSAGE_ID"] == "ee72d3d749804f2993aa282425bb9570")
        #expect(entry["CARREL_EVENT"] == "admin" && entry["CARREL_SESSION"] == "3" && entry["CARREL_CAUSE"] == "done")
        #expect(entry["CARREL_ACTOR"] == "alice@room-b12" && entry["CARREL_AUDIT_SEQ"] == "42")
        #expect(entry["CARREL_AUDIT_HASH"] == String(repeating: "ab", count: 32) && entry["CARREL_RUN"] == "5c0e")
        #expect(entry["CARREL_KIND"] == nil && entry["CARREL_COUNT"] == nil)
        #expect(entry["SYSLOG_IDENTIFIER"] == "carrel" && entry["PRIORITY"] == "6")
        #expect(entry["MESSAGE"] == "carrel: admin session 3 (done) by admin pid 77 as alice@room-b12: carrelctl extend by pid 77 uid 0")

        let blocked = JournalEntry(event: "blocked_summary", session: nil, cause: nil, kind: "clipboard", count: 9995,
                                   actor: nil, seq: 9, hash: "00")
        #expect(blocked["MESSAGE_ID"] == "f795c585acab4137b445d0cc7a8209cc" && blocked["PRIORITY"] == "4")
        #expect(blocked["CARREL_KIND"] == "clipboard" && blocked["CARREL_COUNT"] == "9995" && blocked["CARREL_SESSION"] == nil)
        #expect(JournalEntry(event: "interrupted", session: 1, cause: "time_limit", kind: nil, count: nil, actor: nil, seq: 1, hash: "")["PRIORITY"] == "5")
        #expect(JournalEntry(event: "interrupted", session: 1, cause: "integrity", kind: nil, count: nil, actor: nil, seq: 1, hash: "")["PRIORITY"] == "4")
        #expect(JournalEntry(event: "from_the_future", session: nil, cause: nil, kind: nil, count: nil, actor: nil, seq: 1, hash: "")["MESSAGE_ID"]
                == JournalEntry.otherMessageID)
    }

    @Test("native datagrams and export entries: NAME=value, or the length-prefixed form for a value with a newline")
    func encoding() {
        let entry = JournalEntry(event: "began", session: 1, cause: nil, kind: nil, count: nil, actor: nil, seq: 7, hash: "h",
                                 detail: "two\nlines")
        let native = entry.nativeDatagram
        #expect(String(decoding: native, as: UTF8.self).hasPrefix("MESSAGE=carrel: began session 1: two lines\nMESSAGE_ID=c04a2916d57a45f5a085d754a67b65cd\n"))
        #expect(String(decoding: native, as: UTF8.self).hasSuffix("CARREL_AUDIT_SEQ=7\nCARREL_AUDIT_HASH=h\n"))

        var multi = JournalEntry(coalescedByKind: ["capture": 2], seqs: [5, 6], window: "10.000s")
        let export = multi.exportEntry(realtimeMicroseconds: 1_795_510_800_000_000)
        #expect(String(decoding: export, as: UTF8.self).hasPrefix("__REALTIME_TIMESTAMP=1795510800000000\nMESSAGE=carrel: 2 audit records"))
        #expect(export.suffix(2) == [10, 10], "an export entry ends with an empty line")
        // A value with a newline: NAME, newline, 64-bit little-endian length, the bytes, newline.
        multi = JournalEntry(event: "x", session: nil, cause: nil, kind: "a\nb", count: nil, actor: nil, seq: 1, hash: "")
        let bytes = multi.nativeDatagram
        let marker = Array("CARREL_KIND\n".utf8)
        let at = try! #require(bytes.indices.first { bytes[$0...].starts(with: marker) })
        let length = bytes[(at + marker.count)...].prefix(8)
        #expect(Array(length) == [3, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[(at + marker.count + 8)...].prefix(4)) == Array("a\nb\n".utf8))
    }

    @Test("a coalesced entry counts its records by kind and names their sequence numbers as ranges")
    func coalesced() {
        let entry = JournalEntry(coalescedByKind: ["capture": 3, "clipboard": 2], seqs: [12, 10, 11, 14, 20],
                                 window: "10.000s", run: "r")
        #expect(entry["CARREL_EVENT"] == "journal_coalesced" && entry["CARREL_COUNT"] == "5")
        #expect(entry["CARREL_KIND"] == "capture,clipboard" && entry["CARREL_AUDIT_SEQ_RANGES"] == "10-12,14,20")
        #expect(entry["MESSAGE_ID"] == "67087e59323e4605b64c62387ea10554")
        #expect(entry["MESSAGE"]?.contains("capture 3, clipboard 2") == true)
        #expect(entry["MESSAGE"]?.contains("in the last 10.000s") == true)
    }

    @Test("every MESSAGE_ID is distinct and explained in dist/journal/carrel.catalog")
    func catalog() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let catalog = try String(contentsOf: root.appendingPathComponent("dist/journal/carrel.catalog"), encoding: .utf8)
        let ids = Array(JournalEntry.messageIDs.values) + [JournalEntry.otherMessageID]
        #expect(Set(ids).count == ids.count)
        let headers = catalog.split(separator: "\n").filter { $0.hasPrefix("-- ") }.map { String($0.dropFirst(3)) }
        #expect(Set(headers) == Set(ids), "catalog entries and MESSAGE_IDs differ")
        for id in ids {
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
            let after = try #require(catalog.range(of: "-- \(id)\nSubject: "), "\(id) has no Subject")
            #expect(!after.isEmpty)
        }
        // Every event the audit log writes has its own id.
        for event in ["started", "stopped", "begin", "preconditions", "restrictions_applied", "began", "failed", "interrupted",
                      "updated", "update_failed", "ended", "destroyed", "restrictions_reverted", "blocked", "blocked_summary",
                      "provider_failed", "admin", "app_stop", "attestation", "magnifier_unavailable", "participant_unavailable"] {
            #expect(JournalEntry.messageID(for: event) != JournalEntry.otherMessageID, "\(event)")
        }
    }
}
