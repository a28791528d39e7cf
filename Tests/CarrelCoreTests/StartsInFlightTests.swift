import CarrelCore
import Testing

@Suite("StartsInFlight: what the helper's late answer to a start means")
struct StartsInFlightTests {
    @Test("a start still wanted when its answer comes is kept, and counts as running meanwhile")
    func kept() {
        var starts = StartsInFlight<String>()
        starts.ask("calc")
        #expect(starts.isInFlight("calc"))
        #expect(starts.wanted == ["calc"])
        let answer = starts.answered("calc")
        #expect(answer == .keep)
        #expect(!starts.isInFlight("calc") && starts.wanted.isEmpty)
    }

    @Test("a start stopped before its answer is stopped at once when it comes; it no longer counts as running")
    func stoppedMeanwhile() {
        var starts = StartsInFlight<String>()
        starts.ask("calc")
        let stopped = starts.stop("calc")
        #expect(stopped, "in flight: the answer stops it")
        #expect(starts.wanted.isEmpty)
        #expect(starts.isInFlight("calc"), "its answer is still to come")
        let answer = starts.answered("calc")
        #expect(answer == .stopAtOnce)
    }

    @Test("stopped, then wanted again before the answer: the answer coming is kept, no second start")
    func wantedAgain() {
        var starts = StartsInFlight<String>()
        starts.ask("keyboard")
        starts.stop("keyboard")
        let again = starts.wantAgain("keyboard")
        #expect(again)
        let answer = starts.answered("keyboard")
        #expect(answer == .keep)
        let afterwards = starts.wantAgain("keyboard")
        #expect(!afterwards, "nothing in flight: it is to be asked for")
    }

    @Test("a stop or an answer for nothing asked changes nothing")
    func unknown() {
        var starts = StartsInFlight<String>()
        let stopped = starts.stop("calc")
        #expect(!stopped)
        let answer = starts.answered("calc")
        #expect(answer == .unknown)
        starts.ask("a")
        let other = starts.answered("b")
        #expect(other == .unknown)
        #expect(starts.wanted == ["a"])
    }
}
