import CarrelSystem
import Glibc

/// A fresh home for a program of a role that has none of its own (the input
/// method, the on-screen keyboard): made by root inside the helper's own
/// directory, filled with the files Carrel asked for while it is still
/// root's and private, then handed to the role's user (mode 0700) and used
/// as the program's HOME and XDG_RUNTIME_DIR. Nothing of one run reaches the
/// next (mozc's history, say), and no other role's user can enter it.
enum PrivateHome {
    /// Makes the home in `directory` (root's, writable by nobody else: the
    /// socket's) for `user`, with `files` (paths checked by the request
    /// parser: relative, plain names). Throws why not, leaving nothing behind.
    static func make(in directory: String, role: String, user: Account, files: [String: String]) throws(HelperError) -> String {
        var template = Array("\(directory)/home-\(role)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HelperError("could not make a home for the \(role) in \(directory): \(SystemError.current)")
        }
        let home = String(cString: made)
        var owned = [home]
        do throws(HelperError) {
            for (path, contents) in files.sorted(by: { $0.key < $1.key }) {
                var parent = home
                for name in path.split(separator: "/").dropLast() {
                    parent += "/" + name
                    if mkdir(parent, 0o700) == 0 {
                        owned.append(parent)
                    } else if errno != EEXIST {
                        throw HelperError("could not make \(parent): \(SystemError.current)")
                    }
                }
                let file = home + "/" + path
                let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                guard fd >= 0 else { throw HelperError("could not write \(file): \(SystemError.current)") }
                let bytes = Array(contents.utf8)
                let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                close(fd)
                guard written == bytes.count else { throw HelperError("could not write \(file): \(SystemError.current)") }
                owned.append(file)
            }
            // The files and directories first, the home last: until then only root may enter it.
            for path in owned.reversed() where lchown(path, user.uid, user.gid) != 0 {
                throw HelperError("could not give \(path) to \(user.name): \(SystemError.current)")
            }
        } catch {
            _ = remove(home)
            throw error
        }
        return home
    }

    /// Removes `home` and everything in it, following no symbolic link
    /// (each directory is opened relative to its parent with O_NOFOLLOW) and
    /// crossing no mount; false if something is left (a process of its user
    /// still writing there): try again once its cgroup is empty.
    static func remove(_ home: String) -> Bool {
        guard let slash = home.lastIndex(of: "/") else { return false }
        let parent = open(String(home[..<slash]).isEmpty ? "/" : String(home[..<slash]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else { return false }
        defer { close(parent) }
        var info = stat()
        guard fstatat(parent, String(home[home.index(after: slash)...]), &info, AT_SYMLINK_NOFOLLOW) == 0 else { return errno == ENOENT }
        return removeEntry(String(home[home.index(after: slash)...]), in: parent, device: info.st_dev)
    }

    private static func removeEntry(_ name: String, in parent: Int32, device: dev_t) -> Bool {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return errno == ENOENT }
        guard info.st_mode & S_IFMT == S_IFDIR else { return unlinkat(parent, name, 0) == 0 || errno == ENOENT }
        guard info.st_dev == device else { return false }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0, let directory = fdopendir(fd) else { return false }
        var names: [String] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if entryName != "." && entryName != ".." { names.append(entryName) }
        }
        var removed = true
        for entryName in names where !removeEntry(entryName, in: dirfd(directory), device: device) { removed = false }
        closedir(directory)
        return removed && (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
    }
}
