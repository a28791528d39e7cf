import CarrelCore
import CarrelShim
import Glibc

/// Keeps the seat's metrics file (`[metrics] textfile_dir`) in step with the
/// session, the blocked attempts and the audit log.
extension Server {
    /// Opens the metrics file when the policy asks for one; a directory
    /// Carrel cannot write is logged and shown by `carrelctl status`, and
    /// the seat goes on.
    func startMetrics() {
        guard let directory = policy.metrics.textfileDirectory else { return }
        let metrics = SeatMetrics(version: options.carrelVersion, unixNow: Self.unixNow(),
                                  auditChainOK: auditChainOK)
        let file = MetricsTextfile(directory: directory, metrics: metrics, loop: wl_display_get_event_loop(display), logger: logger)
        file.refreshing = { [unowned self] metrics in observeNow(&metrics) }
        metricsFile = file
        updateMetrics()
    }

    /// Applies `change` and what the Invigilator and the audit log hold now;
    /// the file is rewritten only when something changed.
    func updateMetrics(_ change: (inout SeatMetrics) -> Void = { _ in }) {
        guard let metricsFile else { return }
        metricsFile.update { metrics in
            change(&metrics)
            observeNow(&metrics)
        }
    }

    /// The live session and the audit log's state, into `metrics`.
    private func observeNow(_ metrics: inout SeatMetrics) {
        metrics.observe(desk.invigilator.liveSession, now: AssessmentService.now(), unixNow: Self.unixNow())
        metrics.auditChainOK = auditChainOK
    }

    /// The audit log is whole (Core decides from the log's two facts).
    private var auditChainOK: Bool? {
        SeatMetrics.auditChain(verifiedAtStart: audit.chainVerifiedAtStart, writeFailed: audit.problem != nil)
    }

    /// Status for `carrelctl status`.
    var metricsStatus: ControlStatus.Metrics? {
        metricsFile.map { ControlStatus.Metrics(textfile: $0.path, problem: $0.problem) }
    }

    /// Seconds since the Unix epoch, on the wall clock the room's Prometheus compares with.
    static func unixNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }
}
