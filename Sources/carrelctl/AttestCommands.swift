import ArgumentParser
import CarrelAttestationVerifier
import CarrelAudit
import Foundation

/// `carrelctl attest verify STATEMENT --key PUB`: checks a signed statement
/// offline, as an exam server would (no control socket needed).
extension CarrelCtl {
    struct Attest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Checks signed statements about sessions (attestations).",
            subcommands: [Verify.self])
    }
}

extension CarrelCtl.Attest {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Checks a statement's signature against an enrolled public key, and what the server requires of it.",
            discussion: """
            STATEMENT is a JSON file {"statement": "...", "signature": "<base64>"}, or a \
            submission holding that object under "attestation" (what carrel-demo-exam \
            --submit-url posts). KEY is the public key's file (attestation.pub) or its \
            base64 text.

            Exit status: 0 the statement is genuine and meets every requirement given; \
            1 the signature does not match (changed or cut short); 2 another key signed it; \
            3 genuine, but a requirement is not met (nonce, waived preconditions, \
            configuration, interruption); 65 not a statement (malformed, or larger than \
            Carrel makes); 66 a file cannot be read.
            """)

        @Argument(help: ArgumentHelp("The statement (envelope or submission JSON).", valueName: "statement"))
        var statement: String

        @Option(name: .long, help: ArgumentHelp("The enrolled public key: attestation.pub, or its base64.", valueName: "pub"))
        var key: String

        @Option(name: .long, help: ArgumentHelp("The nonce the server issued, hex.", valueName: "hex"))
        var nonce: String?

        @Flag(name: .customLong("require-no-waivers"), help: "Refuse a session that ran with preconditions waived.")
        var requireNoWaivers = false

        @Option(name: .customLong("require-config"), help: ArgumentHelp("Refuse a session whose configuration digest differs.", valueName: "digest"))
        var requireConfig: String?

        @Flag(name: .customLong("require-not-interrupted"), help: "Refuse a session that was interrupted.")
        var requireNotInterrupted = false

        @Flag(name: .long, help: "Print the verdict as one JSON object.")
        var json = false

        static let exitStatus: [AttestationRejection.Kind: Int32] = [
            .badSignature: 1, .wrongKey: 2, .expectationUnmet: 3, .malformed: 65,
        ]

        func run() throws {
            let data = try read(statement)
            let keyText = FileManager.default.fileExists(atPath: key) ? String(decoding: try read(key), as: UTF8.self) : key
            let publicKey: AttestationPublicKey
            do {
                publicKey = try AttestationPublicKey(base64: keyText)
            } catch {
                Stderr.write("carrelctl: --key \(key): \(error)")
                throw ExitCode(ExitStatus.usage)
            }
            let expectations = AttestationExpectations(nonce: nonce, requireNoWaivers: requireNoWaivers,
                                                       configurationDigest: requireConfig, requireNotInterrupted: requireNotInterrupted)
            do {
                let envelope = try AttestationEnvelope.parse(data)
                let fields = try AttestationVerifier.verify(envelope, key: publicKey, expecting: expectations)
                let session = fields["session"] as? [String: Any]
                if json {
                    print("{\"ok\":true,\"session\":\(session?["id"] as? Int ?? -1),\"configuration_digest\":\"\(fields["configuration_digest"] as? String ?? "")\"}")
                } else {
                    print("\(statement): genuine: signed by \(publicKey.fingerprint); session \(session?["id"] as? Int ?? -1) of run \(session?["run"] as? String ?? "?"), configuration \(fields["configuration_digest"] as? String ?? "?")")
                }
            } catch {
                if json {
                    let object = ["ok": false, "reason": error.kind.rawValue, "message": error.message] as [String: Any]
                    print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                } else {
                    print("\(statement): REFUSED (\(error.kind.rawValue)): \(error.message)")
                }
                throw ExitCode(Self.exitStatus[error.kind] ?? 1)
            }
        }

        private func read(_ path: String) throws -> Data {
            do {
                return try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                Stderr.write("carrelctl: cannot read \(path): \(error.localizedDescription)")
                throw ExitCode(66)
            }
        }
    }
}
