import CZlibLib

/// gzip streams through zlib: SEB compresses a .seb file as a whole and
/// again inside its encrypted and plain-data containers.
public enum Gzip {
    /// The most a configuration may inflate to: a guard against a
    /// decompression bomb, far above any real configuration.
    public static let maximumOutput = 16 << 20

    /// Whether `bytes` start with gzip's magic number.
    public static func isCompressed(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0x1f && iterator.next() == 0x8b
    }

    /// Inflates a gzip stream (one member, as .NET's and Cocoa's writers make).
    public static func decompress(_ input: [UInt8]) throws(SEBError) -> [UInt8] {
        var stream = z_stream()
        // 16 + MAX_WBITS: a gzip header, not zlib's.
        guard inflateInit2_(&stream, 16 + MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .badCompression("zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var status: Int32 = Z_OK
        var input = input
        try input.withUnsafeMutableBufferPointer { (inputBuffer) throws(SEBError) in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return chunkBuffer.count - Int(stream.avail_out)
                }
                switch status {
                case Z_OK, Z_STREAM_END:
                    output.append(contentsOf: chunk[0..<produced])
                case Z_BUF_ERROR where stream.avail_in == 0:
                    throw .truncated("the gzip stream ends early")
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                    throw .badCompression(message)
                }
                if output.count > maximumOutput {
                    throw .tooLarge(output.count)
                }
                if status == Z_OK && stream.avail_in == 0 && produced == 0 {
                    throw .truncated("the gzip stream ends early")
                }
            } while status != Z_STREAM_END
        }
        return output
    }

    /// Deflates `input` into a gzip stream.
    public static func compress(_ input: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY,
                            zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            fatalError("zlib's deflateInit2 failed: out of memory")
        }
        defer { deflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = input
        input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = uInt(inputBuffer.count)
            var status: Int32 = Z_OK
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = uInt(chunkBuffer.count)
                    status = deflate(&stream, Z_FINISH)
                    return chunkBuffer.count - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
            } while status == Z_OK
        }
        return output
    }
}
