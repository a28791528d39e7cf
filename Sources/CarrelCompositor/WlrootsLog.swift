import CarrelShim
import Logging

/// wlroots logs through a C callback without a context pointer, so its sink
/// is a process-wide logger set once at start-up.
private var wlrootsLogger = Logger(label: "wlroots")

enum WlrootsLog {
    /// Routes wlroots' log lines into swift-log at a verbosity matching `level`.
    static func install(level: Logger.Level) {
        wlrootsLogger.logLevel = level
        let verbosity: wlr_log_importance
        switch level {
        case .trace, .debug: verbosity = WLR_DEBUG
        case .info, .notice: verbosity = WLR_INFO
        default: verbosity = WLR_ERROR
        }
        carrel_log_init(Int32(verbosity.rawValue)) { importance, message in
            guard let message else { return }
            let text = String(cString: message)
            switch wlr_log_importance(UInt32(importance)) {
            case WLR_ERROR: wlrootsLogger.error("\(text)")
            case WLR_INFO: wlrootsLogger.info("\(text)")
            default: wlrootsLogger.debug("\(text)")
            }
        }
    }
}
