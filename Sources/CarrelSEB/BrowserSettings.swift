/// The settings carrel-browser honours, read from a configuration with SEB's
/// defaults where a key is absent (and carrel-browser's stricter ones where
/// noted). Every other key is kept in the configuration (it counts in the
/// Config Key) and listed by ``unhonouredKeys``.
public struct BrowserSettings: Sendable {
    /// What a link or script that opens a new window gets.
    public enum NewWindowPolicy: Int, Sendable {
        /// Refused.
        case block = 0
        /// Opened in the exam's one window.
        case sameWindow = 1
        /// SEB would open a second window; carrel-browser has one, so: the same window.
        case newWindow = 2
    }

    /// What a navigation to the quit URL does.
    public enum QuitURLAction: Sendable, Equatable {
        /// Ask in carrel-browser's own window; quit only when confirmed.
        case confirmFirst
        /// Quit at once.
        case quit
    }

    public var startURL: String
    public var quitURL: String?
    /// Ask before quitting through the quit URL (SEB's `quitURLConfirm`,
    /// on by default as in SEB's Config Tool and Moodle).
    public var quitURLConfirm: Bool
    public var hashedQuitPassword: String?
    public var allowQuit: Bool
    public var linkPolicy: NewWindowPolicy
    public var scriptPolicy: NewWindowPolicy
    /// Downloads and uploads (SEB's allowDownUploads). Off unless the file allows them.
    public var allowDownUploads: Bool
    /// Printing (SEB's allowPrint). Off unless the file allows it.
    public var allowPrint: Bool
    public var allowSpellCheck: Bool
    public var enableZoomPage: Bool
    public var enableZoomText: Bool
    /// 0: zoom the page, 1: zoom the text only.
    public var zoomMode: Int
    /// Appended to the user agent (SEB's browserUserAgent).
    public var userAgentSuffix: String
    public var allowBrowsingBackForward: Bool
    public var allowReload: Bool
    /// The context menu (SEB's enableRightMouse). Off unless the file allows it.
    public var enableRightMouse: Bool
    public var enableJavaScript: Bool
    public var sendBrowserExamKey: Bool
    public var filter: URLFilter
    /// Whether a seb(s):// link followed during the exam may replace this
    /// configuration (SEB's examSessionReconfigureAllow and its URL).
    public var reconfigure: ReconfigurePolicy

    /// The keys read above, and those whose meaning carrel-browser or Carrel
    /// covers by construction (one window, an ephemeral session, Carrel's
    /// own lockdown of the machine).
    public static let honouredKeys: Set<String> = Set<String>([
        "startURL", "quitURL", "hashedQuitPassword", "allowQuit", "newBrowserWindowByLinkPolicy",
        "newBrowserWindowByScriptPolicy", "allowDownUploads", "allowPrint", "allowSpellCheck", "enableZoomPage",
        "enableZoomText", "zoomMode", "browserUserAgent", "allowBrowsingBackForward", "browserWindowAllowReload",
        "enableRightMouse", "enableJavaScript", "sendBrowserExamKey", "URLFilterEnable", "URLFilterRules",
        "URLFilterEnableContentFilter", "quitURLConfirm", "examKeySalt", "originatorVersion",
    ]).union(ReconfigurePolicy.keys)

    public init(_ settings: PlistValue) throws(SEBError) {
        func string(_ key: String) throws(SEBError) -> String? {
            guard let value = settings[key] else { return nil }
            guard case .string(let s) = value else {
                throw .invalidSetting(key: key, problem: "is a \(value.typeName); expected a <string>")
            }
            return s
        }
        func bool(_ key: String, _ fallback: Bool) throws(SEBError) -> Bool {
            guard let value = settings[key] else { return fallback }
            guard case .bool(let b) = value else {
                throw .invalidSetting(key: key, problem: "is a \(value.typeName); expected <true/> or <false/>")
            }
            return b
        }
        func integer(_ key: String, _ fallback: Int, _ allowed: ClosedRange<Int>) throws(SEBError) -> Int {
            guard let value = settings[key] else { return fallback }
            guard case .integer(let i) = value, allowed.contains(Int(i)) else {
                throw .invalidSetting(key: key, problem: "is \(value); expected an <integer> from \(allowed.lowerBound) to \(allowed.upperBound)")
            }
            return Int(i)
        }
        guard let start = try string("startURL"), !start.isEmpty else {
            throw .invalidSetting(key: "startURL", problem: "is missing or empty; the configuration must name the exam's start page")
        }
        let lower = start.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw .invalidSetting(key: "startURL", problem: "is '\(start)'; expected an http:// or https:// URL")
        }
        startURL = start
        quitURL = try string("quitURL").flatMap { $0.isEmpty ? nil : $0 }
        quitURLConfirm = try bool("quitURLConfirm", true)
        hashedQuitPassword = try string("hashedQuitPassword").flatMap { $0.isEmpty ? nil : $0 }
        allowQuit = try bool("allowQuit", true)
        linkPolicy = NewWindowPolicy(rawValue: try integer("newBrowserWindowByLinkPolicy", 2, 0...2))!
        scriptPolicy = NewWindowPolicy(rawValue: try integer("newBrowserWindowByScriptPolicy", 2, 0...2))!
        allowDownUploads = try bool("allowDownUploads", false)
        allowPrint = try bool("allowPrint", false)
        allowSpellCheck = try bool("allowSpellCheck", false)
        enableZoomPage = try bool("enableZoomPage", true)
        enableZoomText = try bool("enableZoomText", true)
        zoomMode = try integer("zoomMode", 0, 0...1)
        userAgentSuffix = try string("browserUserAgent") ?? ""
        allowBrowsingBackForward = try bool("allowBrowsingBackForward", false)
        allowReload = try bool("browserWindowAllowReload", true)
        enableRightMouse = try bool("enableRightMouse", false)
        enableJavaScript = try bool("enableJavaScript", true)
        sendBrowserExamKey = try bool("sendBrowserExamKey", true)
        filter = try URLFilter(settings: settings)
        reconfigure = try ReconfigurePolicy(settings)
    }

    /// Whether `url` is the quit URL (a trailing "/" aside, as SEB compares).
    public func isQuitURL(_ url: String) -> Bool {
        guard let quitURL else { return false }
        func trimmed(_ s: String) -> Substring {
            var t = Substring(s)
            while t.hasSuffix("/") { t = t.dropLast() }
            return t
        }
        return trimmed(url) == trimmed(quitURL)
    }

    /// What reaching `url` does: nil when it is not the quit URL.
    public func quitURLAction(_ url: String) -> QuitURLAction? {
        guard isQuitURL(url) else { return nil }
        return quitURLConfirm ? .confirmFirst : .quit
    }

    /// Top-level keys the file sets that carrel-browser does not act on, sorted.
    public static func unhonouredKeys(_ settings: PlistValue) -> [String] {
        guard case .dictionary(let entries) = settings else { return [] }
        return entries.map(\.key).filter { !honouredKeys.contains($0) }.sorted { RootCollation.precedes($0, $1) }
    }

    /// What `--explain` prints: the honoured settings in effect, then the rest.
    public static func explain(_ configuration: SEBConfiguration) -> String {
        var lines: [String] = ["stored as: \(configuration.storage.rawValue)\(configuration.wasCompressed ? ", gzip-compressed" : "")",
                               "Config Key: \(configuration.configKey)"]
        do {
            let s = try BrowserSettings(configuration.settings)
            lines.append("honoured:")
            lines.append("  startURL: \(s.startURL)")
            if case .block(let rule) = s.filter.decide(s.startURL) {
                lines.append("  warning: the URL filter blocks the start URL (\(rule ?? "no rule allows it"))")
            }
            let confirm = s.quitURL == nil ? "" : s.quitURLConfirm ? ", asks to confirm" : ", quits at once"
            lines.append("  quitURL: \(s.quitURL ?? "(none)")\(confirm)")
            lines.append("  allowQuit: \(s.allowQuit); quit password: \(s.hashedQuitPassword == nil ? "none" : "set")")
            let reach = s.filter.filtersContent ? "every request filtered" : "navigations filtered, not a page's other requests"
            lines.append("  URL filter: " + (s.filter.isEnabled
                ? "on, \(s.filter.rules.count) active rules, the rest blocked; \(reach)" : "off (all http and https allowed)"))
            for rule in s.filter.rules {
                lines.append("    \(rule.action == .allow ? "allow" : "block") \(rule.isRegex ? "regex" : "expression") \(rule.expression)")
            }
            if s.filter.filtersContent {
                let unwritten = WebSocketRules.list(for: s.filter).unwritten
                lines.append("  WebSockets: by the same rules, their ws:// or wss:// URL as it is (an http rule does not take ws)"
                             + (unwritten.isEmpty ? "" : "; not every rule can be given to WebKit:"))
                for line in unwritten { lines.append("    \(line)") }
            }
            func policy(_ p: NewWindowPolicy) -> String { p == .block ? "refused" : "opened in the one window" }
            lines.append("  new windows: by link \(policy(s.linkPolicy)), by script \(policy(s.scriptPolicy))")
            lines.append("  downloads/uploads: \(s.allowDownUploads); printing: \(s.allowPrint); spell check: \(s.allowSpellCheck)")
            lines.append("  zoom: page \(s.enableZoomPage), text \(s.enableZoomText), mode \(s.zoomMode == 0 ? "page" : "text")")
            lines.append("  back/forward: \(s.allowBrowsingBackForward); reload: \(s.allowReload); context menu: \(s.enableRightMouse)")
            lines.append("  JavaScript: \(s.enableJavaScript); user agent suffix: '\(s.userAgentSuffix)'")
            let r = s.reconfigure
            lines.append("  reconfiguring from a seb(s):// link in the exam: " + (!r.allow || !r.downloadAndOpen ? "refused"
                : "allowed from \(r.configURL ?? "any link")"))
        } catch {
            lines.append("not usable: \(error)")
        }
        let rest = unhonouredKeys(configuration.settings)
        lines.append("kept but not acted on (they count in the Config Key): \(rest.count)")
        for key in rest {
            lines.append("  \(key) = \(summary(configuration.settings[key]!))")
        }
        return lines.joined(separator: "\n")
    }

    static func summary(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return "\"\(s.count > 60 ? s.prefix(57) + "..." : Substring(s))\""
        case .integer(let i): return String(i)
        case .real(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .date: return ConfigKey.json(.dictionary([("d", value)])).dropFirst(5).dropLast(1).description
        case .data(let d): return "<\(d.count) bytes>"
        case .array(let a): return "<array of \(a.count)>"
        case .dictionary(let d): return "<dict of \(d.count)>"
        }
    }
}
