import CarrelCore
import CarrelMedia
import CarrelShim
import Glibc

/// `media`: MPRIS players on the session bus are paused at began; one that
/// reports (PropertiesChanged) or is found (each verify) playing during the
/// session is paused again. Nothing is resumed at the end.
final class MediaProvider: RestrictionProvider {
    let name = ProvidersPolicy.media
    let recoveryToken = ""
    private let address: String?
    private let loop: OpaquePointer
    private let logger: (String) -> Void
    private var connection: OpaquePointer?
    private var source: EventLoopFDSource?
    static let timeoutMicroseconds: UInt64 = 2_000_000

    init(address: String?, loop: OpaquePointer, logger: @escaping (String) -> Void) {
        self.address = address
        self.loop = loop
        self.logger = logger
    }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let media = carrel_media_connect(address, Self.timeoutMicroseconds, &error, error.count) else {
            throw ProviderError(String(cString: error))
        }
        connection = media
        guard carrel_media_watch(media, &error, error.count) == 0 else {
            throw ProviderError(String(cString: error))
        }
        try pause(all: true)
        // Players that start playing are paused at once, not only at the next verify.
        source = EventLoopFDSource(loop: loop, fd: carrel_media_fd(media)) { [unowned self] _ in busReadable() }
    }

    func verify() throws(ProviderError) {
        try pause(all: false)
    }

    func revert() throws(ProviderError) {
        source?.cancel()
        source = nil
        if let connection { carrel_media_close(connection) }
        connection = nil
    }

    private func busReadable() {
        guard let connection else { return }
        guard carrel_media_process(connection) == 0, carrel_media_connected(connection) != 0 else {
            // The bus went away: stop watching (the fd would stay readable);
            // the next verify reports it.
            source?.cancel()
            source = nil
            return
        }
        guard carrel_media_take_playing(connection) != 0 else { return }
        do { try pause(all: false) } catch { logger("media: \(error.message)") }
    }

    private func pause(all: Bool) throws(ProviderError) {
        guard let connection else { throw ProviderError("no session bus connection") }
        var error = [CChar](repeating: 0, count: 512)
        var paused = [CChar](repeating: 0, count: 1024)
        let count = carrel_media_pause(connection, all ? 1 : 0, &paused, paused.count, &error, error.count)
        if count > 0 {
            logger("media: paused \(String(cString: paused))\(all ? "" : " (it started playing during the session)")")
        }
        guard count >= 0 else { throw ProviderError(String(cString: error)) }
        // Signals that arrived during the calls are queued, not readable.
        if carrel_media_process(connection) == 0, carrel_media_take_playing(connection) != 0, !all {
            _ = carrel_media_pause(connection, 0, &paused, paused.count, &error, error.count)
        }
    }
}
