import CarrelSEB
import CWebKitGTKLib
import Foundation

// carrel-browser: a locked exam browser for web exams. It reads a Safe Exam
// Browser configuration, begins its own Carrel assessment session on its
// window, and only then loads the exam (docs/BROWSER.md).

setvbuf(stdout, nil, _IOLBF, 0)

/// A seb(s):// link's .seb file, fetched with libsoup (WebKit's own HTTP stack).
func fetch(_ url: String) throws -> [UInt8] {
    let session = soup_session_new()
    defer { g_object_unref(raw(session)) }
    guard let message = soup_message_new("GET", url) else {
        throw BrowserError("cannot fetch \(url): not a valid URL")
    }
    defer { g_object_unref(raw(message)) }
    var error: UnsafeMutablePointer<GError>?
    let bytes = soup_session_send_and_read(session, message, nil, &error)
    if let error {
        let text = String(cString: error.pointee.message)
        g_error_free(error)
        throw BrowserError("cannot fetch \(url): \(text); check the link and the network")
    }
    defer { g_bytes_unref(bytes) }
    let statusCode = soup_message_get_status(message)
    guard statusCode.rawValue == 200 else {
        throw BrowserError("cannot fetch \(url): the server answered \(statusCode.rawValue); check the link")
    }
    var size: gsize = 0
    guard let data = g_bytes_get_data(bytes, &size) else { return [] }
    guard size <= SEBConfiguration.maximumFileSize else { throw SEBError.tooLarge(Int(size)) }
    return [UInt8](UnsafeRawBufferPointer(start: data, count: Int(size)))
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("carrel-browser: \(message)\n".utf8))
    exit(status)
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message {
        fail("\(message)\n\(Options.usage)", status: 64)
    }
    print(Options.usage)
    exit(0)
}

var configuration: SEBConfiguration
do {
    let bytes = try readConfigurationBytes(options, fetch: fetch)
    do {
        configuration = try SEBConfiguration(fileBytes: bytes, password: try readPassword(options))
    } catch SEBError.passwordRequired(let client) where options.mode == .run {
        // No --password-file: the student (or invigilator) types it, in a
        // window of carrel-browser's own, before anything else is shown.
        guard let opened = PasswordPrompt(bytes: bytes, forConfiguringClient: client).run() else {
            fail("\(options.source): \(SEBError.passwordRequired(forConfiguringClient: client)) "
                + "(no password was typed, or there is no display to ask on)", status: 65)
        }
        configuration = opened
    }
} catch {
    fail("\(options.source): \(error)", status: 65)
}

let extensionPath = findExtension()
switch options.mode {
case .explain:
    print(BrowserSettings.explain(configuration))
    exit(0)
case .keys:
    let key = configuration.configKey
    let exam = BrowserExamKey.compute(settings: configuration.settings, buildDigest: buildDigest(extensionPath: extensionPath))
    print("Config Key: \(key)")
    print("Browser Exam Key (this build of carrel-browser with this configuration): \(exam)")
    if let start = try? BrowserSettings(configuration.settings).startURL {
        print("X-SafeExamBrowser-ConfigKeyHash for the start URL: \(ConfigKey.urlHash(url: start, key: key))")
    }
    if extensionPath == nil {
        print("warning: the web process extension was not found; the Browser Exam Key above covers the executable only")
    }
    exit(0)
case .run, .check:
    break
}

// Without its extension no request would carry the keys and the page would
// have no SEB API: the LMS would refuse the exam after the machine was locked.
if extensionPath == nil && !options.testRun && options.mode == .run {
    fail("the web process extension libCarrelBrowserExtension.so was not found beside carrel-browser, in "
        + "../lib/carrel, /usr/local/lib/carrel or /usr/lib/carrel; install it there or set CARREL_BROWSER_EXTENSION",
        status: 69)
}

let settings: BrowserSettings
do {
    settings = try BrowserSettings(configuration.settings)
} catch {
    fail("\(options.source): \(error)", status: 65)
}
// The web process filters with GLib's GRegex (PCRE) the patterns decided
// here with ICU: CarrelSEB held each to the dialect both read alike; one
// PCRE would still refuse stops carrel-browser here, naming its rule,
// rather than block every request of the exam.
if let problem = gregexRefusal(settings) {
    fail("\(options.source): \(problem)", status: 65)
}
if options.mode == .check {
    for url in options.checkURLs {
        print(settings.filter.verdict(url))
    }
    exit(0)
}
for name in options.allowedFeatures where AssessmentFeatureName.isKnown(name) == false {
    fail("unknown feature '\(name)' for --allow; expected a protocol name such as spell_check or input_method", status: 64)
}

// WebKit's bubblewrap sandbox shows its web process the Wayland socket at
// $XDG_RUNTIME_DIR/$WAYLAND_DISPLAY only. Carrel gives its exam app an
// absolute path (in a folder of its own under XDG_RUNTIME_DIR): named
// relative to XDG_RUNTIME_DIR, as libwayland also accepts, the sandbox finds
// it. Where no such name exists (an open connection, WAYLAND_SOCKET, or a
// socket elsewhere), WebKit runs unsandboxed and carrel-browser says so.
// Carrel's lockdown of the machine holds either way; the sandbox confines a
// compromised web process further.
let environment = ProcessInfo.processInfo.environment
if environment["WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS"] == nil {
    let runtime = environment["XDG_RUNTIME_DIR"].map { $0.hasSuffix("/") ? $0 : $0 + "/" }
    if let display = environment["WAYLAND_DISPLAY"], display.hasPrefix("/") {
        if let runtime, display.hasPrefix(runtime) {
            setenv("WAYLAND_DISPLAY", String(display.dropFirst(runtime.count)), 1)
        } else {
            setenv("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS", "1", 1)
            say("warning: WebKit's web process sandbox is off (the Wayland socket is outside XDG_RUNTIME_DIR)")
        }
    } else if environment["WAYLAND_SOCKET"] != nil && environment["WAYLAND_DISPLAY"] == nil {
        setenv("WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS", "1", 1)
        say("warning: WebKit's web process sandbox is off (an open Wayland connection cannot be passed into it)")
    }
}

browser = Browser(options: options, configuration: configuration, settings: settings, extensionPath: extensionPath)
exit(browser.run())
