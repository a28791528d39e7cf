import AssessmentKit
import CarrelClientShim
import Testing

/// AssessmentKit puts CarrelWire's raw values on the wire and reads reasons
/// off it into its error codes; the generated client header (from the XML,
/// the contract) names each value, so a constant renamed or renumbered in the
/// XML breaks the build or these tests. (CarrelWire's own names, values and
/// versions are checked against the XML in ProtocolAgreementTests.)
@Suite("Agreement with the generated carrel-assessment-v1 client header")
struct WireAgreementTests {
    @Test("features")
    func features() {
        let wire: [(UInt32, AssessmentFeature, String)] = [
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_SPELL_CHECK.rawValue, .spellCheck, "spell_check"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_PREDICTIVE_TEXT.rawValue, .predictiveText, "predictive_text"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_AUTOCORRECT.rawValue, .autocorrect, "autocorrect"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_INPUT_METHOD.rawValue, .inputMethod, "input_method"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_ON_SCREEN_KEYBOARD.rawValue, .onScreenKeyboard, "on_screen_keyboard"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_KEYBOARD_SHORTCUTS.rawValue, .keyboardShortcuts, "keyboard_shortcuts"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_SCREEN_MAGNIFIER.rawValue, .screenMagnifier, "screen_magnifier"),
            (CARREL_ASSESSMENT_MANAGER_V1_FEATURE_SCREEN_READER.rawValue, .screenReader, "screen_reader"),
        ]
        #expect(wire.count == AssessmentFeature.allCases.count)
        for (value, feature, name) in wire {
            #expect(feature.rawValue == value)
            #expect(feature.protocolName == name)
        }
    }

    @Test("failure reasons")
    func failureReasons() {
        let wire: [(UInt32, String)] = [
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_OTHER.rawValue, "other"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_ALREADY_ACTIVE.rawValue, "already_active"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_NOT_ENTITLED.rawValue, "not_entitled"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_UNSUPPORTED_CONFIGURATION.rawValue, "unsupported_configuration"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_SURFACE_NOT_READY.rawValue, "surface_not_ready"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_TIMEOUT.rawValue, "timeout"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_RESTRICTION_FAILED.rawValue, "restriction_failed"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_INTERNAL.rawValue, "internal"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_INTERRUPTED.rawValue, "interrupted"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_CANCELLED.rawValue, "cancelled"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_PRECONDITIONS_UNMET.rawValue, "preconditions_unmet"),
            (CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_PARTICIPANT_UNAVAILABLE.rawValue, "participant_unavailable"),
        ]
        #expect(wire.count == FailureReason.allCases.count)
        for (value, name) in wire {
            #expect(AssessmentError.Code(failureReason: value).protocolName == name)
        }
        #expect(AssessmentError.Code(failureReason: (wire.map(\.0).max() ?? 0) + 1) == .other,
                "a reason of a later version reads as other")
    }

    @Test("interruption reasons")
    func interruptionReasons() {
        let wire: [(UInt32, String)] = [
            (CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_OTHER.rawValue, "other"),
            (CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_INTEGRITY.rawValue, "integrity"),
            (CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_ADMINISTRATIVE.rawValue, "administrative"),
            (CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_TIME_LIMIT.rawValue, "time_limit"),
            (CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_SHUTDOWN.rawValue, "shutdown"),
        ]
        for (value, name) in wire {
            #expect(AssessmentError.Code(interruptionReason: value).protocolName == name)
        }
        #expect(AssessmentError.Code(interruptionReason: (wire.map(\.0).max() ?? 0) + 1) == .other)
        #expect(wire.count == InterruptionReason.allCases.count)
    }

    @Test("every reason has its own code, and the code leads back to the reason")
    func codesRoundTrip() {
        for reason in FailureReason.allCases {
            #expect(AssessmentError.Code(reason).failureReason == reason)
        }
        for reason in InterruptionReason.allCases where reason != .other {
            #expect(AssessmentError.Code(reason).interruptionReason == reason)
        }
        #expect(AssessmentError.Code.connection.failureReason == nil && AssessmentError.Code.connection.interruptionReason == nil)
    }

    @Test("AssessmentKit binds the version the generated header was made for")
    func boundVersion() {
        #expect(AssessmentProtocol.version == UInt32(carrel_assessment_session_v1_interface.version))
        #expect(AssessmentProtocol.version == UInt32(carrel_assessment_manager_v1_interface.version))
    }
}
