import Glibc

/// `errno` as the words a log line or an error message carries.
public enum SystemError {
    /// The text of the current `errno` ("No such file or directory").
    public static var current: String { describe(errno) }

    public static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
