import ArgumentParser
import CarrelAudit
import CarrelCore
import Glibc

/// `carrel keygen`: makes the machine's attestation key and prints its public
/// half for enrolment with exam servers.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create this machine's Ed25519 attestation key and print its public half.",
        discussion: """
        Writes DIR/attestation.key (the private half, mode 0600, readable by its owner \
        only; run as root so that owner is root) and DIR/attestation.pub, then prints the \
        public key (base64 of its raw 32 bytes) and its fingerprint (SHA-256, hex) for \
        the exam server to enrol. Point the policy at the private half: \
        [attestation] key = "DIR/attestation.key". An existing key is kept unless \
        --force. Carrel has no privileged helper yet: the compositor reads the key \
        itself, so root on this machine can sign anything (docs/ATTESTATION.md).
        """
    )

    @Option(name: .customLong("key-dir"), help: ArgumentHelp("Where to write the key.", valueName: "dir"))
    var keyDirectory: String = AttestationPolicy.defaultKeyDirectory

    @Flag(name: .long, help: "Replace an existing key (exam servers must enrol the new public key).")
    var force = false

    func run() throws {
        var stderr = StandardError()
        let key = AttestationKey.generate()
        do {
            let paths = try key.write(toDirectory: keyDirectory, overwrite: force)
            if getuid() != 0 {
                print("carrel keygen: warning: not run as root, so \(paths.privateKey) is owned by uid \(getuid()); on an exam machine make it root's", to: &stderr)
            }
            print("private key: \(paths.privateKey) (mode 0600)")
            print("public key:  \(paths.publicKey)")
            print("public key (base64, enrol this): \(key.publicKey.base64)")
            print("fingerprint (sha256): \(key.publicKey.fingerprint)")
            print("policy: [attestation] key = \"\(paths.privateKey)\"")
        } catch {
            print("carrel keygen: \(error)", to: &stderr)
            throw ExitCode(1)
        }
    }
}
