import CarrelCore
import Testing

/// The engine started through the privileged helper, whose answer the
/// compositor does not wait for: what the answer means when it comes (a
/// session that changed the engine's prediction meanwhile restarts it), and
/// what a start that failed or was never answered within the link's bound
/// means (the same as a launch that failed: a back-off, then giving up).
/// Keys typed meanwhile are held (InputMethodKeyHoldTests).
@Suite("Desk: the input method started through the helper")
struct InputMethodHelperStartTests {
    func double() -> DeskDouble {
        var policy = Policy.builtIn
        policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
        var double = DeskDouble(Desk.Setup(policy: policy))
        double.window(1, Owners.app)
        return double
    }

    /// A session begun on the app's behalf allowing the input method but not prediction.
    func begin(_ double: inout DeskDouble) -> SessionID {
        let id = double.desk.allocateSessionID()
        let now = double.now
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(allowedFeatures: [.inputMethod]), now: now) }
        #expect(double.events[id] == [.began])
        return id
    }

    @Test("a start in flight is the engine on its way; its answer launches it with the setting asked")
    func answerLaunches() {
        var double = double()
        double.desk.inputMethodStarting(prediction: true)
        #expect(double.desk.inputMethod.awaitingEngine)
        #expect(double.desk.inputMethod.startingWithPrediction == true)
        #expect(double.desk.inputMethod.launchedWithPrediction == nil)
        let now = double.now
        let effects = double.run { $0.inputMethodStarted(now: now) }
        #expect(effects.isEmpty)
        #expect(double.desk.inputMethod.startingWithPrediction == nil)
        #expect(double.desk.inputMethod.launchedWithPrediction == true)
        #expect(double.inputMethodRestarts == 0)
    }

    @Test("a session that turns prediction off while the start is in flight restarts the engine when the answer comes, not before")
    func sessionMeanwhileRestartsOnAnswer() {
        var double = double()
        double.desk.inputMethodStarting(prediction: true)
        let id = begin(&double)
        // Nothing runs yet to restart: the answer decides.
        #expect(double.inputMethodRestarts == 0)
        let now = double.now
        double.run { $0.inputMethodStarted(now: now) }
        #expect(double.inputMethodRestarts == 1)
        #expect(double.desk.inputMethod.launchedWithPrediction == false)
        double.run { $0.end(id) }
        #expect(double.inputMethodRestarts == 2)
    }

    @Test("an engine asked with the setting the session wants is kept when the answer comes")
    func sessionMeanwhileSameSetting() {
        var double = double()
        _ = begin(&double)
        double.desk.inputMethodStarting(prediction: double.desk.enginePredictionAllowed)
        let now = double.now
        #expect(double.run { $0.inputMethodStarted(now: now) }.isEmpty)
        #expect(double.inputMethodRestarts == 0)
        #expect(double.desk.inputMethod.launchedWithPrediction == false)
    }

    @Test("a start that failed (the helper's error, or silent past its bound) is relaunched with the back-off, then given up")
    func failedStartRelaunches() {
        var double = double()
        var now = double.now
        for _ in 0..<11 {
            double.desk.inputMethodStarting(prediction: true)
            now = now.advanced(by: .milliseconds(10))
            double.run { $0.inputMethodStartFailed("could not launch: no answer within 12.0 s", now: now) }
            #expect(double.desk.inputMethod.startingWithPrediction == nil)
        }
        #expect(double.inputMethodRelaunches == [250, 500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000].map { .milliseconds($0) })
        #expect(double.desk.inputMethod.awaitingEngine == false)
    }

    @Test("an answer with no start in flight means nothing")
    func strayAnswer() {
        var double = double()
        let now = double.now
        #expect(double.run { $0.inputMethodStarted(now: now) }.isEmpty)
        #expect(double.run { $0.inputMethodStartFailed("could not launch", now: now) }.isEmpty)
        #expect(double.desk.inputMethod.launchedWithPrediction == nil)
        #expect(double.inputMethodRelaunches.isEmpty)
    }
}
