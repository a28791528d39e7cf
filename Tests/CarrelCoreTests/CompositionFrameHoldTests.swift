import CarrelCore
import Testing

/// Frames wait for the composing app's redraw after composed text went to
/// it, at most `CompositionFrameHold.limit`, never otherwise, and an engine
/// relaying without pause cannot keep the screen from being drawn.
@Suite("Composition frame hold")
struct CompositionFrameHoldTests {
    let start = Instant(nanoseconds: 5_000_000_000)

    func after(_ milliseconds: Int64) -> Instant { start.advanced(by: .milliseconds(milliseconds)) }

    @Test func nothingWaitsBeforeAnythingWasRelayed() {
        let hold = CompositionFrameHold()
        #expect(!hold.holds(at: start))
        #expect(hold.deadline == nil)
    }

    @Test func framesWaitAfterARelayUntilTheLimit() {
        var hold = CompositionFrameHold()
        let began = hold.relayed(at: start)
        #expect(began, "a wait begins")
        #expect(hold.holds(at: start))
        #expect(hold.holds(at: after(7)))
        #expect(!hold.holds(at: after(8)))
        #expect(hold.deadline == after(8))
    }

    @Test func theAppsRedrawLetsTheFrameGo() {
        var hold = CompositionFrameHold()
        hold.relayed(at: start)
        hold.release()
        #expect(!hold.holds(at: start))
        #expect(hold.deadline == nil)
    }

    @Test func aWaitsDeadlineNeverMoves() {
        var hold = CompositionFrameHold()
        hold.relayed(at: start)
        let again = hold.relayed(at: after(6))
        #expect(!again, "no second wait while one runs")
        #expect(hold.deadline == after(8))
        #expect(!hold.holds(at: after(8)))
    }

    @Test func afterAWaitTheNextFrameGoesWhateverIsRelayed() {
        var hold = CompositionFrameHold()
        hold.relayed(at: start)
        hold.release()
        hold.relayed(at: after(1))
        #expect(!hold.holds(at: after(1)), "the redraw's frame is owed before a new wait")
        hold.frameRendered()
        hold.relayed(at: after(2))
        #expect(hold.holds(at: after(2)))
    }

    @Test func anExpiredWaitOwesAFrameBeforeTheNext() {
        var hold = CompositionFrameHold()
        hold.relayed(at: start)
        // The deadline passed with no frame yet: a relay now starts nothing.
        hold.relayed(at: after(9))
        #expect(!hold.holds(at: after(9)))
        #expect(hold.deadline == after(8))
        hold.frameRendered()
        #expect(hold.deadline == nil)
    }

    @Test func releasingEndsTheWait() {
        var hold = CompositionFrameHold()
        hold.relayed(at: start)
        hold.release()
        #expect(!hold.holds(at: start))
        hold.release()
        #expect(!hold.holds(at: start))
    }

    @Test func anEngineRelayingWithoutPauseDelaysEachFrameAtMostTheLimit() {
        var hold = CompositionFrameHold()
        var rendered: [Int64] = []
        // A relay every millisecond for 100 ms, the app never redrawing;
        // a frame is due every millisecond and goes when not held.
        for ms in Int64(0)..<100 {
            hold.relayed(at: after(ms))
            if !hold.holds(at: after(ms)) {
                rendered.append(ms)
                hold.frameRendered()
            }
        }
        let gaps = zip(rendered.dropFirst(), rendered).map { $0 - $1 }
        #expect(rendered.count >= 10)
        #expect(gaps.allSatisfy { $0 <= 9 })
    }

    @Test func theLimitIsAtMostHalfA60HzFramePeriod() {
        #expect(CompositionFrameHold.limit <= .microseconds(8_334))
    }
}
