import CarrelCore
import Foundation
import Testing

/// The XML is the contract: CarrelWire's enums (which CarrelCore and
/// AssessmentKit both use) must carry exactly its names, values and versions,
/// so either side can put raw values on the wire unchanged.
@Suite("Agreement with carrel-assessment-v1.xml")
struct ProtocolAgreementTests {
    /// The XML's enums and interface versions, read once.
    static let parsed: (enums: [String: [String: [(String, UInt32)]]], since: [String: UInt32], versions: [String: UInt32]) = {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocols/carrel-assessment-v1.xml").path
        guard let xml = try? String(contentsOfFile: path, encoding: .utf8) else { return ([:], [:], [:]) }
        var result: [String: [String: [(String, UInt32)]]] = [:]
        var since: [String: UInt32] = [:]
        var versions: [String: UInt32] = [:]
        var interface = "", enumeration = ""
        // Tags are split on "<"; attributes are read from the tag's text.
        for tag in xml.split(separator: "<").map({ $0.replacingOccurrences(of: "\n", with: " ") }) {
            func attribute(_ name: String) -> String? {
                guard let start = tag.range(of: " \(name)=\"") else { return nil }
                return String(tag[start.upperBound...].prefix { $0 != "\"" })
            }
            if tag.hasPrefix("interface ") {
                interface = attribute("name") ?? ""
                versions[interface] = attribute("version").flatMap(UInt32.init)
            }
            if tag.hasPrefix("enum ") { enumeration = attribute("name") ?? "" }
            if tag.hasPrefix("entry "), let name = attribute("name"), let value = attribute("value").flatMap(UInt32.init) {
                result[interface, default: [:]][enumeration, default: []].append((name, value))
                // An entry without `since` exists from version 1.
                since["\(interface).\(enumeration).\(name)"] = attribute("since").flatMap(UInt32.init) ?? 1
            }
        }
        return (result, since, versions)
    }()

    /// interface → enum → [(entry name, value)], in file order.
    static var enums: [String: [String: [(String, UInt32)]]] { parsed.enums }

    static func entries(_ interface: String, _ name: String) -> [String] {
        (enums[interface]?[name] ?? []).map { "\($0.0)=\($0.1)" }
    }

    @Test("the protocol file is where the tests expect it")
    func fileFound() {
        #expect(!Self.enums.isEmpty, "protocols/carrel-assessment-v1.xml not found or has no enums")
    }

    @Test("features and who enforces them")
    func features() {
        #expect(Self.entries("carrel_assessment_manager_v1", "feature") ==
            AssessmentFeature.allCases.map { "\($0.protocolName)=\($0.rawValue)" })
        #expect(Self.entries("carrel_assessment_manager_v1", "enforcement") ==
            AssessmentFeature.Enforcement.allCases.map { "\($0)=\($0.rawValue)" })
        #expect(Self.entries("carrel_assessment_manager_v1", "lock_state") == ["inactive=0", "active=1"])
        #expect(LockState.inactive.rawValue == 0 && LockState.active.rawValue == 1)
    }

    @Test("failure and interruption reasons")
    func reasons() {
        #expect(Self.entries("carrel_assessment_session_v1", "failure_reason") ==
            FailureReason.allCases.map { "\($0.protocolName)=\($0.rawValue)" })
        #expect(Self.entries("carrel_assessment_session_v1", "interruption_reason") ==
            InterruptionReason.allCases.map { "\($0.protocolName)=\($0.rawValue)" })
        #expect(Self.entries("carrel_assessment_session_v1", "attestation_failure_reason") ==
            AttestationFailureReason.allCases.map { "\($0.protocolName)=\($0.rawValue)" })
    }

    @Test("each reason's version is the XML's since, and the interfaces' version is the protocol's")
    func versions() {
        for reason in FailureReason.allCases {
            #expect(Self.parsed.since["carrel_assessment_session_v1.failure_reason.\(reason.protocolName)"] == reason.since, "\(reason)")
        }
        for reason in InterruptionReason.allCases {
            #expect(Self.parsed.since["carrel_assessment_session_v1.interruption_reason.\(reason.protocolName)"] == reason.since, "\(reason)")
        }
        #expect(Self.parsed.since["carrel_assessment_session_v1.failure_reason.preconditions_unmet"] == 2)
        #expect(Self.parsed.since["carrel_assessment_session_v1.failure_reason.participant_unavailable"] == 2)
        #expect(Self.parsed.versions == [
            AssessmentProtocol.managerInterface: AssessmentProtocol.version,
            AssessmentProtocol.configurationInterface: AssessmentProtocol.version,
            AssessmentProtocol.sessionInterface: AssessmentProtocol.version,
        ])
        for reason in AttestationFailureReason.allCases {
            #expect(Self.parsed.since["carrel_assessment_session_v1.attestation_failure_reason.\(reason.protocolName)"] == reason.since, "\(reason)")
        }
        #expect(AssessmentProtocol.version == 3)
    }

    @Test("protocol error codes")
    func errors() {
        let id = SessionID(1)
        #expect(Self.entries("carrel_assessment_manager_v1", "error") == ["bad_surface=\(ProtocolViolation.badSurface(id).code)"])
        #expect(Self.entries("carrel_assessment_session_v1", "error") ==
            ["not_begun=\(ProtocolViolation.notBegun(id).code)", "already_ended=\(ProtocolViolation.alreadyEnded(id).code)"])
        #expect(Self.entries("carrel_assessment_configuration_v1", "error") == [
            "already_set=\(ConfigurationError.featureAlreadyAllowed(.spellCheck).code)",
            "invalid_feature=\(ConfigurationError.invalidFeature(99).code)",
            "invalid_time_limit=\(ConfigurationError.invalidTimeLimit.code)",
        ])
        for violation in [ProtocolViolation.badSurface(id), .notBegun(id), .alreadyEnded(id)] {
            #expect(Self.enums[violation.interface]?["error"] != nil)
        }
    }
}
