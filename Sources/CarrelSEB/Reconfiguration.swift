/// Whether a seb:// or sebs:// link a page follows during the exam may
/// replace the configuration in force (SEB's "reconfiguring" in an exam
/// session). SEB's keys:
///
/// - `examSessionReconfigureAllow` (default false): reconfiguring is allowed
///   at all. Absent or false, every such link is refused: carrel-browser
///   fails closed.
/// - `examSessionReconfigureConfigURL`: the link(s) allowed, `*` matching any
///   run of characters, the rest compared exactly. Absent or empty: any link.
///   It is compared with the link as the page gave it (seb:// or sebs://) and
///   with the http(s) URL it names, so either form may be written.
/// - `downloadAndOpenSebConfig` (default true): false refuses opening any
///   configuration from the exam's pages.
public struct ReconfigurePolicy: Sendable, Equatable {
    public var allow: Bool
    public var configURL: String?
    public var downloadAndOpen: Bool

    public static let keys: Set<String> = ["examSessionReconfigureAllow", "examSessionReconfigureConfigURL",
                                           "downloadAndOpenSebConfig"]

    public enum Verdict: Sendable, Equatable {
        /// The link may reconfigure: the configuration it names is fetched from this http(s) URL.
        case allowed(configurationURL: String)
        /// Refused, with why (a clause for the student's refusal).
        case refused(String)
    }

    public init(allow: Bool = false, configURL: String? = nil, downloadAndOpen: Bool = true) {
        self.allow = allow
        self.configURL = configURL
        self.downloadAndOpen = downloadAndOpen
    }

    public init(_ settings: PlistValue) throws(SEBError) {
        func bool(_ key: String, _ fallback: Bool) throws(SEBError) -> Bool {
            guard let value = settings[key] else { return fallback }
            guard case .bool(let b) = value else {
                throw .invalidSetting(key: key, problem: "is a \(value.typeName); expected <true/> or <false/>")
            }
            return b
        }
        allow = try bool("examSessionReconfigureAllow", false)
        downloadAndOpen = try bool("downloadAndOpenSebConfig", true)
        switch settings["examSessionReconfigureConfigURL"] {
        case nil: configURL = nil
        case .string(let s)?: configURL = s.isEmpty ? nil : s
        case let value?:
            throw .invalidSetting(key: "examSessionReconfigureConfigURL", problem: "is a \(value.typeName); expected a <string>")
        }
    }

    /// Whether `link` (a seb:// or sebs:// URL a page asked for) may replace
    /// the configuration this policy belongs to.
    public func decide(link: String) -> Verdict {
        let url: String
        do {
            guard let named = try SEBLink.configurationURL(link) else {
                return .refused("it is not a seb:// or sebs:// link")
            }
            url = named
        } catch {
            return .refused("the link is not valid (\(error))")
        }
        guard downloadAndOpen else {
            return .refused("the exam's configuration does not allow opening configurations from its pages")
        }
        guard allow else {
            return .refused("the exam's configuration does not allow reconfiguring during the exam")
        }
        if let pattern = configURL, !(Self.matches(pattern, link) || Self.matches(pattern, url)) {
            return .refused("the exam's configuration allows reconfiguring only from \(pattern)")
        }
        return .allowed(configurationURL: url)
    }

    /// `text` matched whole against `pattern`, where `*` stands for any run
    /// of characters (none included) and every other character for itself.
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars), t = Array(text.unicodeScalars)
        var i = 0, j = 0
        var star = -1, resume = 0
        while j < t.count {
            if i < p.count, p[i] != "*", p[i] == t[j] {
                i += 1
                j += 1
            } else if i < p.count, p[i] == "*" {
                star = i
                resume = j
                i += 1
            } else if star >= 0 {
                // Let the last star take one more character and retry after it.
                i = star + 1
                resume += 1
                j = resume
            } else {
                return false
            }
        }
        while i < p.count, p[i] == "*" { i += 1 }
        return i == p.count
    }
}
