import CarrelCore
import CarrelPolicyFile
import Testing

@Suite("--assessment: the CONFIG.toml file")
struct AssessmentModeFileTests {
    func parse(_ text: String) throws(AssessmentModeFile.Error) -> AssessmentConfiguration {
        try AssessmentModeFile.parse(text, file: "exam.toml")
    }

    @Test("an empty file is the most restrictive session with the policy's time limit")
    func empty() throws {
        #expect(try parse("") == .mostRestrictive)
    }

    @Test("minutes or seconds, and features by their protocol names")
    func values() throws {
        let exam = try parse("time_limit_minutes = 90\nallow = [\"input_method\", \"spell_check\"]\n")
        #expect(exam.timeLimit == 5400)
        #expect(exam.allowedFeatures == [.inputMethod, .spellCheck])
        #expect(try parse("time_limit_seconds = 30").timeLimit == 30)
        #expect(try parse("allow = []").allowedFeatures.isEmpty)
    }

    @Test("every mistake names the file and the key", arguments: [
        ("time_limit = 5", "time_limit", "unknown key"),
        ("time_limit_minutes = 0", "time_limit_minutes", "positive"),
        ("time_limit_minutes = -3", "time_limit_minutes", "positive"),
        ("time_limit_seconds = 4294967296", "time_limit_seconds", "out of range"),
        ("time_limit_minutes = 71582789", "time_limit_minutes", "out of range"),
        ("time_limit_minutes = \"90\"", "time_limit_minutes", "whole number"),
        ("time_limit_minutes = 1\ntime_limit_seconds = 1", "time_limit_seconds", "not both"),
        ("allow = \"input_method\"", "allow", "array"),
        ("allow = [3]", "allow", "strings"),
        ("allow = [\"telepathy\"]", "allow", "unknown feature \"telepathy\""),
        ("[allow]\nx = 1", "allow", "array"),
    ])
    func mistakes(text: String, key: String, words: String) {
        #expect {
            _ = try parse(text)
        } throws: { error in
            let error = error as! AssessmentModeFile.Error
            return error.key == key && error.description.hasPrefix("exam.toml: key `\(key)`: ")
                && error.description.contains(words)
        }
    }

    @Test("a file that is not TOML says where")
    func notTOML() {
        #expect {
            _ = try parse("allow = [\n")
        } throws: { error in
            let error = error as! AssessmentModeFile.Error
            return error.key == nil && error.description.hasPrefix("exam.toml: not valid TOML") && error.description.contains("line")
        }
    }
}
