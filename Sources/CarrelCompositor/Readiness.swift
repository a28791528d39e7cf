import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// Tells scripts and service managers that clients can connect.
enum Readiness {
    static func announce(socketName: String, readyFD: Int32?, logger: Logger) {
        if let fd = readyFD {
            let line = socketName + "\n"
            let written = line.withCString { write(fd, $0, strlen($0)) }
            if written < 0 {
                logger.warning("could not write readiness to fd \(fd): \(SystemError.current)")
            }
            close(fd)
        }
        // A no-op returning 0 when NOTIFY_SOCKET is unset.
        let result = sd_notify(0, "READY=1\nSTATUS=listening on \(socketName)")
        if result < 0 {
            logger.warning("sd_notify failed: \(SystemError.describe(-result))")
        }
    }
}
