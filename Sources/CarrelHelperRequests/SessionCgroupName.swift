/// The names of Carrel's session cgroups inside its delegated subtree, as
/// the privileged helper accepts them: `carrel-PID` (the app's),
/// `carrel-PID-owner` (an app-requested lock's owner),
/// `carrel-PID-participant-ID` (a participant), `carrel-PID-input-method`
/// and `carrel-PID-keyboard` (the on-screen keyboard). The
/// helper only touches cgroups of this form, so a compositor cannot make it
/// exempt or kill anything else.
public enum SessionCgroupName {
    /// Whether `path` (relative to the cgroup v2 root) is `subtree/NAME` with
    /// NAME of one of the five forms.
    public static func isSessionCgroup(_ path: String, under subtree: String) -> Bool {
        let prefix = subtree.isEmpty ? "" : subtree + "/"
        guard path.hasPrefix(prefix) else { return false }
        return isName(String(path.dropFirst(prefix.count)))
    }

    /// Whether `path` is the input method's or the keyboard's session
    /// cgroup: those never keep the network (what a student types must not
    /// leave the machine through them), so an exemption naming one is refused.
    public static func isNetworkless(_ path: String, under subtree: String) -> Bool {
        guard isSessionCgroup(path, under: subtree) else { return false }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let rest = name.dropFirst("carrel-".count).drop(while: { $0.isASCII && $0.isNumber })
        return rest == "-input-method" || rest == "-keyboard"
    }

    /// Whether `name` (one path component) is a session cgroup's name.
    public static func isName(_ name: String) -> Bool {
        guard name.hasPrefix("carrel-") else { return false }
        let rest = name.dropFirst("carrel-".count)
        let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count <= 10 else { return false }
        let tail = rest.dropFirst(digits.count)
        if tail.isEmpty || tail == "-owner" || tail == "-input-method" || tail == "-keyboard" { return true }
        guard tail.hasPrefix("-participant-") else { return false }
        let id = tail.dropFirst("-participant-".count)
        return !id.isEmpty && id.count <= 64 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// Whether `subtree` is a usable delegated subtree: relative to the
    /// cgroup root, no empty, `.` or `..` components, no quotes or spaces.
    public static func isSubtree(_ subtree: String) -> Bool {
        guard !subtree.hasPrefix("/"), !subtree.hasSuffix("/"), subtree.utf8.count <= 1024 else { return false }
        if subtree.isEmpty { return true }
        return subtree.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
            !part.isEmpty && part != "." && part != ".."
                && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.@:\\".contains($0)) }
        }
    }
}
