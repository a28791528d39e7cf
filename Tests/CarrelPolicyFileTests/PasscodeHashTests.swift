import CarrelPasscode
import Testing

@Suite("Guided Access passcode hashes")
struct PasscodeHashTests {
    @Test("a hash verifies its passcode and no other")
    func roundTrip() throws {
        let line = try PasscodeHash.make(passcode: "4711-exam")
        #expect(try PasscodeHash.verify(passcode: "4711-exam", against: line))
        #expect(try !PasscodeHash.verify(passcode: "4711-exaM", against: line))
        #expect(try !PasscodeHash.verify(passcode: "", against: line))
        let parsed = try PasscodeHash(parsing: line)
        #expect(parsed.iterations == PasscodeHash.defaultIterations)
        #expect(parsed.iterations >= 200_000)
        #expect(parsed.salt.count == 16 && parsed.derivedKey.count == 32)
        #expect(parsed.description == line, "parsing and printing round-trip")
        #expect(line.hasPrefix("pbkdf2-sha256$600000$"))
        #expect(!line.contains("4711"), "the passcode is not in the line")
    }

    @Test("the same passcode hashes differently each time: the salt is random")
    func salted() throws {
        let a = try PasscodeHash.make(passcode: "same-passcode", iterations: 210_000)
        let b = try PasscodeHash.make(passcode: "same-passcode", iterations: 210_000)
        #expect(a != b)
        #expect(try PasscodeHash(parsing: a).salt != PasscodeHash(parsing: b).salt)
        #expect(try PasscodeHash.verify(passcode: "same-passcode", against: b))
    }

    @Test("a known vector: PBKDF2-HMAC-SHA256 as Python's hashlib computes it")
    func knownVector() throws {
        // Computed independently: python3 -c 'import hashlib,base64;
        // print(base64.b64encode(hashlib.pbkdf2_hmac("sha256", b"passcode", b"0123456789abcdef", 210000)).decode())'
        let line = "pbkdf2-sha256$210000$MDEyMzQ1Njc4OWFiY2RlZg==$Q3os0h/jCZv6Foj249mDwZUfUCyemDVq02lvi9RWuBA="
        #expect(try PasscodeHash.verify(passcode: "passcode", against: line))
    }

    @Test("a passcode too short or an iteration count out of range is refused")
    func refusedInputs() {
        #expect(throws: PasscodeHash.PasscodeError.tooShort(minimum: 4)) { try PasscodeHash.make(passcode: "123") }
        #expect(throws: PasscodeHash.PasscodeError.iterations(1000)) { try PasscodeHash.make(passcode: "1234", iterations: 1000) }
    }

    @Test("each malformed line gets its own error", arguments: [
        ("", PasscodeHash.FormatError.fieldCount(1)),
        ("pbkdf2-sha256$600000$c2FsdA==", .fieldCount(3)),
        ("scrypt$600000$MDEyMzQ1Njc4OWFiY2RlZg==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=", .scheme("scrypt")),
        ("pbkdf2-sha256$209999$MDEyMzQ1Njc4OWFiY2RlZg==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=", .iterations("209999")),
        ("pbkdf2-sha256$99999999999$MDEyMzQ1Njc4OWFiY2RlZg==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=", .iterations("99999999999")),
        ("pbkdf2-sha256$+600000$MDEyMzQ1Njc4OWFiY2RlZg==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=", .iterations("+600000")),
        ("pbkdf2-sha256$600000$c2FsdA==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=", .salt),
        ("pbkdf2-sha256$600000$not base64$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=", .salt),
        ("pbkdf2-sha256$600000$MDEyMzQ1Njc4OWFiY2RlZg==$c2hvcnQ=", .derivedKey),
    ])
    func malformed(line: String, error: PasscodeHash.FormatError) {
        #expect(throws: error) { try PasscodeHash(parsing: line) }
        #expect(throws: error) { try PasscodeHash.verify(passcode: "1234", against: line) }
        #expect(error.description.hasPrefix("must "))
    }
}
