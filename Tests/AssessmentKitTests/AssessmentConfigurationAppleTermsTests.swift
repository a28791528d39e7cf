import AssessmentKit
import Testing

@Suite("AssessmentConfiguration in Apple's terms maps onto the protocol's features")
struct AssessmentConfigurationAppleTermsTests {
    /// Each Boolean property with the protocol feature name it must set, as the XML spells it.
    static var booleans: [(WritableKeyPath<AssessmentConfiguration, Bool>, String, String)] { [
        (\.allowsSpellCheck, "allowsSpellCheck", "spell_check"),
        (\.allowsPredictiveKeyboard, "allowsPredictiveKeyboard", "predictive_text"),
        (\.allowsKeyboardShortcuts, "allowsKeyboardShortcuts", "keyboard_shortcuts"),
        (\.allowsAccessibilitySpeech, "allowsAccessibilitySpeech", "screen_reader"),
        (\.allowsInputMethods, "allowsInputMethods", "input_method"),
        (\.allowsOnScreenKeyboard, "allowsOnScreenKeyboard", "on_screen_keyboard"),
        (\.allowsScreenMagnifier, "allowsScreenMagnifier", "screen_magnifier"),
    ] }

    @Test("everything is denied by default")
    func defaults() {
        let configuration = AssessmentConfiguration()
        for (property, name, _) in Self.booleans {
            #expect(configuration[keyPath: property] == false, "\(name)")
        }
        #expect(configuration.autocorrectMode == .none)
        #expect(configuration.autocorrectMode.isEmpty)
    }

    @Test("each Boolean allows exactly its feature and denies it again", arguments: 0..<7)
    func boolean(index: Int) {
        let (property, name, feature) = Self.booleans[index]
        var configuration = AssessmentConfiguration()
        configuration[keyPath: property] = true
        #expect(configuration.allowedFeatures.map(\.protocolName) == [feature], "\(name)")
        #expect(configuration[keyPath: property])
        configuration[keyPath: property] = false
        #expect(configuration.allowedFeatures.isEmpty, "\(name)")
    }

    @Test("a Boolean reads the feature set, and clearing one leaves the others")
    func readsFeatures() {
        var configuration = AssessmentConfiguration(allowedFeatures: [.screenReader, .spellCheck, .inputMethod])
        #expect(configuration.allowsAccessibilitySpeech)
        #expect(configuration.allowsSpellCheck)
        #expect(configuration.allowsInputMethods)
        #expect(!configuration.allowsPredictiveKeyboard)
        configuration.allowsSpellCheck = false
        #expect(configuration.allowedFeatures == [.screenReader, .inputMethod])
    }

    @Test("any autocorrect mode but none allows the one autocorrect feature, which reads back as all")
    func autocorrect() {
        var configuration = AssessmentConfiguration()
        configuration.autocorrectMode = .punctuation
        #expect(configuration.allowedFeatures == [.autocorrect])
        #expect(configuration.autocorrectMode == [.spelling, .punctuation],
                "the protocol cannot allow punctuation without spelling")
        configuration.autocorrectMode = .none
        #expect(configuration.allowedFeatures.isEmpty)
        configuration.autocorrectMode = .spelling
        #expect(configuration.allowedFeatures == [.autocorrect])
        configuration.autocorrectMode = []
        #expect(!configuration.allowedFeatures.contains(.autocorrect))
    }

    @Test("the Apple-style properties together cover every feature of the protocol")
    func coversEveryFeature() {
        var configuration = AssessmentConfiguration()
        for (property, _, _) in Self.booleans { configuration[keyPath: property] = true }
        configuration.autocorrectMode = .all
        #expect(configuration.allowedFeatures.count == 8)
        #expect(Set(configuration.allowedFeatures.map(\.protocolName)) == [
            "spell_check", "predictive_text", "autocorrect", "input_method", "on_screen_keyboard",
            "keyboard_shortcuts", "screen_magnifier", "screen_reader",
        ])
    }

    @Test("a session sends what the Apple-style properties allowed")
    func sessionSendsIt() {
        let lockdown = InMemoryAssessmentManager()
        var configuration = AssessmentConfiguration()
        configuration.allowsSpellCheck = true
        configuration.allowsAccessibilitySpeech = true
        let (session, recorder) = makeSession(lockdown, configuration)
        session.begin()
        lockdown.dispatch()
        #expect(recorder.events == [.began])
        #expect(lockdown.lockedConfiguration?.allowedFeatures == [.spellCheck, .screenReader])
    }
}
