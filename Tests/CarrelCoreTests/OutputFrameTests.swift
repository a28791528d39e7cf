import CarrelCore
import Testing

/// An output renders a frame when a session asks for one, when the scene
/// changed and has been shown before, or when it first has something to
/// show; an empty scene is not committed over a screen that is black
/// already, and is committed first where the screen still shows what was
/// behind it.
@Suite("Output frame")
struct OutputFrameTests {
    func decide(session: Bool = false, held: Bool = false, damaged: Bool = true, wanted: Bool = false,
                shown: Bool = true, black: Bool = true, content: Bool = true) -> OutputFrame {
        OutputFrame.decide(sessionFrameRequested: session, heldForComposition: held, damaged: damaged,
                           frameWanted: wanted, sceneFrameShown: shown, screenBlack: black, sceneHasContent: content)
    }

    @Test func aDamagedSceneIsRendered() {
        #expect(decide() == .render)
        #expect(decide(content: false) == .render, "once shown, an emptied scene is drawn (black over what was there)")
    }

    @Test func nothingChangedNothingIsCommitted() {
        #expect(decide(damaged: false) == .skip)
        #expect(decide(damaged: false, shown: false, content: false) == .skip)
    }

    @Test func anEmptySceneWaitsUntilItHasContentWhereTheScreenIsBlack() {
        #expect(decide(shown: false, content: false) == .awaitContent)
        #expect(decide(shown: false, content: true) == .render)
    }

    @Test func aFrameWantedIsRenderedEvenFromAnEmptyScene() {
        #expect(decide(damaged: false, wanted: true, shown: false, content: false) == .render,
                "a capture client waiting for a frame gets one")
        #expect(decide(damaged: false, wanted: true) == .render)
    }

    @Test func aScreenStillShowingWhatWasBehindItGetsTheBlackFrameAtOnce() {
        #expect(decide(shown: false, black: false, content: false) == .render)
    }

    @Test func aSessionsFrameIsAlwaysRendered() {
        #expect(decide(session: true, held: true, damaged: false, shown: false, content: false) == .render)
    }

    @Test func aCompositionHoldDelaysOnlyOrdinaryFrames() {
        #expect(decide(held: true) == .hold)
        #expect(decide(held: true, damaged: false) == .hold, "the callbacks wait with the frame")
    }

    @Test func theSceneIsLookedAtOnlyBeforeItsFirstFrame() {
        var asked = 0
        func content() -> Bool { asked += 1; return true }
        _ = OutputFrame.decide(sessionFrameRequested: false, heldForComposition: false, damaged: true,
                               frameWanted: false, sceneFrameShown: true, screenBlack: true, sceneHasContent: content())
        _ = OutputFrame.decide(sessionFrameRequested: false, heldForComposition: false, damaged: false,
                               frameWanted: false, sceneFrameShown: false, screenBlack: true, sceneHasContent: content())
        _ = OutputFrame.decide(sessionFrameRequested: false, heldForComposition: false, damaged: true,
                               frameWanted: false, sceneFrameShown: false, screenBlack: false, sceneHasContent: content())
        #expect(asked == 0)
        _ = OutputFrame.decide(sessionFrameRequested: false, heldForComposition: false, damaged: true,
                               frameWanted: false, sceneFrameShown: false, screenBlack: true, sceneHasContent: content())
        #expect(asked == 1)
    }
}
