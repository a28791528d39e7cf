import CarrelCore
import CarrelPolicyFile
import Foundation
import Testing

/// The repository's root, from this file's path.
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

@Suite("examples/policy.toml")
struct ExamplePolicyTests {
    @Test("the committed example is valid and says what its comments say")
    func exampleIsValid() throws {
        let path = repository.appendingPathComponent("examples/policy.toml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let policy = try PolicyFile.parse(text, file: path)
        #expect(policy.session.entitledRoles == [.app])
        #expect(policy.session.defaultTimeLimit == UInt32(90 * 60))
        #expect(policy.session.maximumTimeLimit == UInt32(240 * 60))
        #expect(policy.participants["calculator"]?.command == ["/usr/bin/galculator"])
        #expect(policy.emergencyBinding?.description == "Ctrl+Alt+Shift+Escape")
        // Every other key is written with its default value.
        #expect(policy.onScreenKeyboard == Policy.builtIn.onScreenKeyboard)
        #expect(policy.capture == Policy.builtIn.capture)
        #expect(policy.outputs == Policy.builtIn.outputs)
        #expect(policy.kiosk == Policy.builtIn.kiosk)
        #expect(policy.appLock == Policy.builtIn.appLock)
        #expect(policy.guidedAccess == Policy.builtIn.guidedAccess)
        #expect(policy.control == Policy.builtIn.control)
        #expect(policy.preconditions == Policy.builtIn.preconditions)
        #expect(policy.audit == Policy.builtIn.audit)
        #expect(policy.attestation == Policy.builtIn.attestation)
        #expect(policy.magnifier == Policy.builtIn.magnifier)
    }

    @Test("docs/POLICY.md shows the example as committed")
    func policyPageShowsTheExample() throws {
        let page = try String(contentsOfFile: repository.appendingPathComponent("docs/POLICY.md").path, encoding: .utf8)
        let example = try String(contentsOfFile: repository.appendingPathComponent("examples/policy.toml").path, encoding: .utf8)
        #expect(page.contains("```toml\n" + example + "```"), "docs/POLICY.md's policy example differs from examples/policy.toml")
    }
}
