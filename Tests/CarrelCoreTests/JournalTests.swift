import CarrelCore
import Testing

@Suite("Journal coalesced entry")
struct JournalCoalescedEntryTests {
    @Test("a pace's summary becomes the coalesced entry of its records, its window as log lines show it")
    func fromSummary() {
        let summary = JournalPace.Summary(byKind: ["capture": 3, "clipboard": 2], seqs: [12, 10, 11, 14, 20], window: .milliseconds(2500))
        let entry = JournalEntry(coalesced: summary, run: "r")
        let direct = JournalEntry(coalescedByKind: summary.byKind, seqs: summary.seqs, window: "2.500s", run: "r")
        #expect(entry.fields.map(\.name) == direct.fields.map(\.name) && entry.fields.map(\.value) == direct.fields.map(\.value))
        #expect(entry["CARREL_COUNT"] == "5" && entry["MESSAGE"]?.contains("in the last 2.500s") == true)
    }
}

@Suite("Journal pace")
struct JournalPaceTests {
    @Test("a session's story always goes; blocked attempts past the burst are held and summarised when the window closes")
    func flood() {
        var pace = JournalPace(burst: 3, window: .seconds(10))
        let t0 = Instant.seconds(100)
        var sent: [UInt64] = []
        for seq in UInt64(1)...10 {
            let (decision, closed) = pace.admit(event: "blocked", kind: seq % 2 == 0 ? "capture" : "clipboard", seq: seq, now: t0)
            #expect(closed == nil)
            if decision == .send { sent.append(seq) }
        }
        #expect(sent == [1, 2, 3])
        // A transition in the middle of a flood is never held.
        #expect(pace.admit(event: "interrupted", kind: nil, seq: 11, now: .seconds(105)).decision == .send)
        #expect(pace.admit(event: "admin", kind: nil, seq: 12, now: .seconds(105)).decision == .send)
        #expect(pace.windowEnd == .seconds(110) && pace.isHolding)
        #expect(pace.expired(now: .seconds(109)) == nil)
        let summary = pace.expired(now: .seconds(110))
        #expect(summary == JournalPace.Summary(byKind: ["capture": 4, "clipboard": 3], seqs: [4, 5, 6, 7, 8, 9, 10], window: .seconds(10)))
        #expect(!pace.isHolding)
        // A new window: the burst again.
        #expect(pace.admit(event: "blocked", kind: "capture", seq: 13, now: .seconds(111)).decision == .send)
        #expect(pace.windowEnd == .seconds(121))
    }

    @Test("a record after a window closed brings that window's summary first; nothing is lost or counted twice")
    func accounting() {
        var pace = JournalPace(burst: 2, window: .seconds(1))
        var sent = 0, summarised = 0
        var seqs: [UInt64] = []
        for seq in UInt64(1)...1000 {
            let now = Instant(nanoseconds: seq * 7_000_000)  // 7 s in all
            let (decision, closed) = pace.admit(event: "blocked", kind: "capture", seq: seq, now: now)
            if let closed {
                summarised += Int(closed.count)
                seqs += closed.seqs
            }
            if decision == .send {
                sent += 1
                seqs.append(seq)
            }
        }
        if let last = pace.flush() {
            summarised += Int(last.count)
            seqs += last.seqs
        }
        #expect(sent + summarised == 1000)
        #expect(seqs.sorted() == Array(1...1000))
        #expect(sent <= 2 * 8, "at most the burst in each of the 7 s's windows")
        #expect(pace.flush() == nil)
    }
}
