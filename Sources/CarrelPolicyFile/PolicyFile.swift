import CarrelCore
import TOMLKit

/// The policy file: TOML text in, a validated `Policy` or every problem out.
///
/// Pure: the caller reads the file (`carrel` does, from `--policy PATH`) and
/// passes the text with the name to print in errors.
///
/// ```swift
/// let policy = try PolicyFile.parse("[kiosk]\nenabled = true\n", file: "policy.toml")
/// try PolicyFile.parse("[kiosk]\nmaximum_relaunches = \"five\"\n", file: "policy.toml")
/// // throws: policy.toml:2: kiosk.maximum_relaunches: must be an integer from 0 to 100, got "five"
/// ```
public enum PolicyFile {
    /// Where Carrel looks when `--policy` is not given.
    public static let defaultPath = "/etc/carrel/policy.toml"
    /// Far more than any policy needs; a larger file is refused unread.
    public static let maximumByteCount = 1 << 20

    /// The policy `text` describes, checked as a whole: either every key is
    /// valid and the policy is returned, or nothing is and every problem is
    /// thrown. Keys the file leaves out take their documented defaults,
    /// which are `Policy.builtIn`'s.
    public static func parse(_ text: String, file: String) throws(PolicyFileError) -> Policy {
        // TOMLKit hands the text to C++ as a C string, which would end at a NUL.
        if let nul = text.firstIndex(of: "\0") {
            let line = text[..<nul].count(where: { $0 == "\n" }) + 1
            throw PolicyFileError(problems: [PolicyProblem(file: file, line: line, key: "file",
                                                           message: "contains a NUL byte; a policy is UTF-8 text")])
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw PolicyFileError(problems: [PolicyProblem(
                file: file, line: error.source.begin.line, column: error.source.begin.column,
                key: "TOML syntax", message: error.description)])
        } catch {
            throw PolicyFileError(problems: [PolicyProblem(file: file, line: 1, key: "TOML syntax",
                                                           message: "\(error)")])
        }
        var reader = PolicyReader(file: file, lines: SourceLines(text))
        let policy = reader.read(root)
        guard reader.problems.isEmpty else {
            // In file order; problems on one line keep the order they were found in.
            let ordered = reader.problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
            throw PolicyFileError(problems: ordered.map(\.element))
        }
        return policy
    }
}
