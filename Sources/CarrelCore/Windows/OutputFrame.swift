/// What an output does with a frame wlroots offers it (the backend's
/// vertical blank, its timer, or a frame Carrel scheduled).
///
/// What was on a screen before Carrel (a console, a login screen) must be
/// gone before anything else: an output's first frame is black unless the
/// scene already has content. Where the screen is black already, because
/// wlroots lit the output with a black buffer of its own (DRM, where a mode
/// cannot be set without one; every backend since wlroots 0.17), or where
/// there is no screen (headless), that black frame would change nothing a
/// person could see, and committing it would only make the output wait a
/// refresh period before it may show the app's first buffer. There the
/// output commits nothing until the scene has content, then at once, and
/// meanwhile offers itself a frame every refresh period, so a capture
/// client asking for a frame of the black screen gets one. Where the screen
/// still shows what was behind it (wlroots 0.15's nested X11 and Wayland
/// backends light an output without a buffer), the black frame goes first.
///
/// ```swift
/// OutputFrame.decide(sessionFrameRequested: false, heldForComposition: false, damaged: true,
///                    frameWanted: false, sceneFrameShown: false, screenBlack: true,
///                    sceneHasContent: false)  // .awaitContent
/// ```
public enum OutputFrame: Sendable, Equatable {
    /// Render the scene and commit it.
    case render
    /// Commit nothing; clients still get their frame callbacks, so they
    /// keep their own pace.
    case skip
    /// Commit nothing while the scene is empty over a black screen, and
    /// offer a frame again after a refresh period (some backends offer no
    /// more frames until one is committed).
    case awaitContent
    /// Commit nothing yet: the frame waits for the composing app's redraw
    /// (`CompositionFrameHold`), and so do the frame callbacks.
    case hold

    /// - Parameters:
    ///   - sessionFrameRequested: a session waits for this output to present
    ///     a frame with its restrictions in place; such a frame is always
    ///     rendered and never waits.
    ///   - heldForComposition: the composition hold has a wait running.
    ///   - damaged: the scene has damage not rendered yet, or wlroots asked
    ///     for a frame.
    ///   - frameWanted: a frame must be committed whatever the damage (a
    ///     capture client waits for one): it is rendered.
    ///   - sceneFrameShown: this output has committed a frame of the scene.
    ///   - screenBlack: before any scene frame, the output shows black (wlroots
    ///     enabled it with a black buffer) or has no screen.
    ///   - sceneHasContent: the scene draws anything but its black clear
    ///     colour; asked only when the answer matters.
    public static func decide(sessionFrameRequested: Bool, heldForComposition: Bool, damaged: Bool,
                              frameWanted: Bool, sceneFrameShown: Bool, screenBlack: Bool,
                              sceneHasContent: @autoclosure () -> Bool) -> OutputFrame {
        if sessionFrameRequested { return .render }
        if heldForComposition { return .hold }
        if !damaged && !frameWanted { return .skip }
        if !sceneFrameShown && screenBlack && !frameWanted && !sceneHasContent() { return .awaitContent }
        return .render
    }
}
