import CarrelAttestationVerifier
import CarrelAudit
import Foundation
import Testing

/// The attestation key on disk and the offline verifier `carrelctl attest verify` uses.
@Suite("Attestation key and verifier")
struct AttestationKeyTests {
    func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "carrel-attest-\(UUID().uuidString)"
        return path
    }

    @Test("keygen writes a 0600 private half and a .pub line; load reads the same key back")
    func roundTrip() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = AttestationKey.generate()
        let paths = try key.write(toDirectory: directory, overwrite: false)
        let mode = try FileManager.default.attributesOfItem(atPath: paths.privateKey)[.posixPermissions] as! Int
        #expect(mode == 0o600)
        let publicLine = try String(contentsOfFile: paths.publicKey, encoding: .utf8)
        #expect(publicLine == key.publicKey.base64 + "\n")
        #expect(Data(base64Encoded: key.publicKey.base64)?.count == 32)
        let loaded = try AttestationKey.load(path: paths.privateKey)
        let message = Array("statement".utf8)
        let signature = try loaded.sign(message)
        #expect(signature.count == 64)
        #expect(try AttestationPublicKey(base64: publicLine).isValidSignature(signature, for: message))
        // White space around the line, a Windows line end among it, is not part of the key.
        #expect(try AttestationPublicKey(base64: " \t" + key.publicKey.base64 + "\r\n\n") == key.publicKey)
        #expect(throws: AttestationKeyError.self) { try AttestationPublicKey(base64: " \n ") }
        #expect(!key.publicKey.isValidSignature(signature, for: Array("statemenT".utf8)))
        #expect(key.publicKey.fingerprint.count == 64)
    }

    @Test("an existing key is kept unless overwrite; a key others may read is refused")
    func refusals() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = AttestationKey.generate()
        let paths = try first.write(toDirectory: directory, overwrite: false)
        #expect(throws: AttestationKeyError.self) { try AttestationKey.generate().write(toDirectory: directory, overwrite: false) }
        #expect(try AttestationKey.load(path: paths.privateKey).publicKey == first.publicKey)
        let second = AttestationKey.generate()
        _ = try second.write(toDirectory: directory, overwrite: true)
        #expect(try AttestationKey.load(path: paths.privateKey).publicKey == second.publicKey)
        chmod(paths.privateKey, 0o640)
        do {
            _ = try AttestationKey.load(path: paths.privateKey)
            Issue.record("a group-readable key was loaded")
        } catch {
            #expect(error.description.contains("chmod 600"))
        }
        #expect(throws: AttestationKeyError.self) { try AttestationKey.load(path: directory + "/missing.key") }
        #expect(throws: AttestationKeyError.self) { try AttestationPublicKey(base64: "AAAA") }
    }

    /// A minimal statement with the fields the verifier reads; the bytes are signed as they are.
    func signed(_ text: String, by key: AttestationKey) throws -> AttestationEnvelope {
        AttestationEnvelope(statement: Array(text.utf8), signature: try key.sign(Array(text.utf8)))
    }

    func statement(key: AttestationKey, waived: String = "", interrupted: Bool = false) -> String {
        #"{"configuration_digest":"cd","format":"carrel-attestation-1","key_fingerprint":""# + key.publicKey.fingerprint
            + #"","nonce":"abcd","preconditions":{"waived":["# + waived + #"]},"session":{"id":1,"interrupted":"#
            + (interrupted ? "true" : "false") + #","interruptions":["# + (interrupted ? #""integrity""# : "") + "]}}"
    }

    func rejection(_ envelope: AttestationEnvelope, key: AttestationPublicKey, _ expectations: AttestationExpectations = .init()) -> AttestationRejection.Kind? {
        do {
            _ = try AttestationVerifier.verify(envelope, key: key, expecting: expectations)
            return nil
        } catch {
            return error.kind
        }
    }

    @Test("the verifier accepts a genuine statement and names each defect")
    func verifier() throws {
        let key = AttestationKey.generate()
        let other = AttestationKey.generate()
        let good = try signed(statement(key: key), by: key)
        #expect(rejection(good, key: key.publicKey, .init(nonce: "ABCD", configurationDigest: "cd", requireNotInterrupted: true)) == nil)
        #expect(rejection(good, key: other.publicKey) == .wrongKey)
        var changed = good
        changed.statement[changed.statement.count - 3] ^= 0x01
        #expect(rejection(changed, key: key.publicKey) == .badSignature)
        var cut = good
        cut.statement.removeLast(10)
        #expect(rejection(cut, key: key.publicKey) == .badSignature)
        var large = good
        large.statement += Array(repeating: UInt8(ascii: " "), count: 3073)
        #expect(rejection(large, key: key.publicKey) == .malformed)
        #expect(rejection(good, key: key.publicKey, .init(nonce: "abce")) == .expectationUnmet)
        #expect(rejection(good, key: key.publicKey, .init(configurationDigest: "other")) == .expectationUnmet)
        let waived = try signed(statement(key: key, waived: #""seat""#), by: key)
        #expect(rejection(waived, key: key.publicKey) == nil)
        #expect(rejection(waived, key: key.publicKey, .init(requireNoWaivers: true)) == .expectationUnmet)
        let interrupted = try signed(statement(key: key, interrupted: true), by: key)
        #expect(rejection(interrupted, key: key.publicKey, .init(requireNotInterrupted: true)) == .expectationUnmet)
    }

    @Test("an envelope is read alone or from a submission's attestation member")
    func envelope() throws {
        let key = AttestationKey.generate()
        let good = try signed(statement(key: key), by: key)
        #expect(try AttestationEnvelope.parse(Data(good.json.utf8)) == good)
        #expect(try AttestationEnvelope.parse(Data(("{\"answers\":{},\"attestation\":" + good.json + "}").utf8)) == good)
        #expect(throws: AttestationRejection.self) { try AttestationEnvelope.parse(Data("{\"answers\":{}}".utf8)) }
        #expect(throws: AttestationRejection.self) { try AttestationEnvelope.parse(Data("not json".utf8)) }
    }
}
