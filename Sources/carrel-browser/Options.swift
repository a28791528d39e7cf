import CarrelSEB
import CarrelWire
import Foundation

/// carrel-browser's command line.
struct Options {
    enum Mode { case run, explain, keys, check }

    var mode = Mode.run
    /// A .seb file's path, or a seb:// / sebs:// link.
    var source = ""
    var passwordFile: String?
    /// Show the exam outside Carrel, unlocked, saying so on screen.
    var testRun = false
    /// Features the session allows (protocol names: spell_check, input_method, …).
    var allowedFeatures: [String] = []
    /// URLs whose fate under the configuration's filter --check prints.
    var checkURLs: [String] = []

    static let usage = """
        usage: carrel-browser [--test-run] [--password-file FILE] [--allow FEATURE]... CONFIG
               carrel-browser --explain [--password-file FILE] CONFIG
               carrel-browser --keys [--password-file FILE] CONFIG
               carrel-browser --check URL [--check URL]... [--password-file FILE] CONFIG
        CONFIG is a .seb file or a seb:// or sebs:// link to one.
          --explain          print the settings honoured and those kept but not acted on, then exit
          --keys             print the Config Key and this build's Browser Exam Key, then exit
          --check URL        print whether the configuration lets URL load (navigations, and every request
                             when it filters content, WebSockets' ws:// and wss:// URLs too), then exit; repeatable
          --password-file F  the password of an encrypted .seb file, read from F (first line)
          --allow FEATURE    allow a feature in the session (spell_check, input_method, ...), repeatable
          --test-run         outside Carrel: show the exam unlocked, marked as a test run
        Run it as Carrel's exam app: carrel -- env GDK_BACKEND=wayland carrel-browser exam.seb
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--explain": options.mode = .explain
            case "--keys": options.mode = .keys
            case "--test-run": options.testRun = true
            case "--check":
                guard let url = rest.popFirst() else { throw UsageError("--check needs a URL") }
                options.mode = .check
                options.checkURLs.append(url)
            case "--password-file":
                guard let file = rest.popFirst() else { throw UsageError("--password-file needs a FILE") }
                options.passwordFile = file
            case "--allow":
                guard let feature = rest.popFirst() else { throw UsageError("--allow needs a FEATURE such as spell_check") }
                options.allowedFeatures.append(feature)
            case "-h", "--help":
                throw UsageError(nil)
            default:
                if argument.hasPrefix("-") { throw UsageError("unknown option \(argument)") }
                guard options.source.isEmpty else { throw UsageError("give one configuration, not '\(options.source)' and '\(argument)'") }
                options.source = argument
            }
        }
        guard !options.source.isEmpty else { throw UsageError("no configuration given") }
        return options
    }
}

struct UsageError: Error {
    let message: String?
    init(_ message: String?) { self.message = message }
}

/// The bytes of the configuration a command line names: a file, or a
/// seb(s):// link fetched over http(s).
func readConfigurationBytes(_ options: Options, fetch: (String) throws -> [UInt8]) throws -> [UInt8] {
    if let url = try SEBLink.configurationURL(options.source) {
        return try fetch(url)
    }
    guard let data = FileManager.default.contents(atPath: options.source) else {
        throw BrowserError("cannot read \(options.source); give the path of a .seb file or a seb:// link")
    }
    return [UInt8](data)
}

/// The password --password-file names (its first line), or nil.
func readPassword(_ options: Options) throws -> String? {
    guard let file = options.passwordFile else { return nil }
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
        throw BrowserError("cannot read the password file \(file); give a readable file whose first line is the password")
    }
    return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// This build's identity for the Browser Exam Key: the digest of the
/// executable and of the web process extension it loads.
func buildDigest(extensionPath: String?) -> String {
    var files: [[UInt8]] = []
    if let exe = FileManager.default.contents(atPath: "/proc/self/exe") { files.append([UInt8](exe)) }
    if let path = extensionPath, let ext = FileManager.default.contents(atPath: path) { files.append([UInt8](ext)) }
    return BrowserExamKey.buildDigest(files: files)
}

/// The web process extension: $CARREL_BROWSER_EXTENSION, else beside the
/// executable (the build folder), else the installed library folders.
func findExtension() -> String? {
    let name = "libCarrelBrowserExtension.so"
    if let path = ProcessInfo.processInfo.environment["CARREL_BROWSER_EXTENSION"], !path.isEmpty {
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let dir = (exe as NSString).deletingLastPathComponent
    for candidate in [dir + "/" + name, dir + "/../lib/carrel/" + name, "/usr/local/lib/carrel/" + name, "/usr/lib/carrel/" + name]
    where FileManager.default.fileExists(atPath: candidate) {
        return (candidate as NSString).standardizingPath
    }
    return nil
}

let appVersion = "carrel-browser 1.0"

enum AssessmentFeatureName {
    static func isKnown(_ name: String) -> Bool { AssessmentFeature(protocolName: name) != nil }
}
