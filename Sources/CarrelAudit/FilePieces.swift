import Glibc

/// Why a file could not be read through.
public struct FileReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// An open file read from its first byte with `pread` (the descriptor's
/// offset does not matter) through one 64 KiB buffer: a hundred-megabyte
/// executable or a log of months is never held whole. Used by the digests
/// and the audit chain's walk.
enum FilePieces {
    static let size = 1 << 16

    /// Hands each piece to `body` until it returns false, the file ends,
    /// or `length` bytes were read (nil: to the end). A file that ends
    /// before `length` is an error: it was cut while being read.
    static func read(_ fd: Int32, length: Int? = nil, _ body: (ArraySlice<UInt8>) -> Bool) -> Result<Void, FileReadError> {
        var buffer = [UInt8](repeating: 0, count: size)
        var offset = 0
        while length.map({ offset < $0 }) ?? true {
            let wanted = min(buffer.count, length.map { $0 - offset } ?? buffer.count)
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(offset)) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(FileReadError(String(cString: strerror(errno))))
            }
            if count == 0 {
                guard length == nil else { return .failure(FileReadError("the file became shorter while it was read")) }
                break
            }
            offset += count
            guard body(buffer[..<count]) else { break }
        }
        return .success(())
    }
}
