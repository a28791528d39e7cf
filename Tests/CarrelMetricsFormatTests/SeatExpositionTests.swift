import CarrelMetricsFormat
import Testing

@Suite("Seat exposition")
struct SeatExpositionTests {
    func exposition(auditChainOK: Bool?) -> SeatExposition {
        SeatExposition(version: "1.0 \"beta\"\\\n", state: .ending, stateSince: 1_795_510_800, deadline: nil,
                       blockedAttempts: [("capture", 2), ("clipboard", 0)], interruptions: [("time_limit", 30)],
                       sessions: [.ended: 4], auditChainOK: auditChainOK)
    }

    @Test("every family has HELP and TYPE; states one-hot, every outcome listed, label values escaped")
    func text() {
        let text = exposition(auditChainOK: true).text
        for family in ["carrel_build_info", "carrel_session_state", "carrel_session_state_since_seconds",
                       "carrel_session_deadline_seconds", "carrel_blocked_attempts_total", "carrel_interruptions_total",
                       "carrel_sessions_total", "carrel_audit_chain_ok"] {
            #expect(text.contains("# HELP \(family) ") && text.contains("# TYPE \(family) "), "\(family)")
        }
        #expect(text.contains("carrel_build_info{version=\"1.0 \\\"beta\\\"\\\\\\n\"} 1\n"))
        #expect(text.contains("carrel_session_state{state=\"idle\"} 0\n") && text.contains("carrel_session_state{state=\"ending\"} 1\n"))
        #expect(text.contains("carrel_session_deadline_seconds 0\n"))
        #expect(text.contains("carrel_blocked_attempts_total{kind=\"capture\"} 2\ncarrel_blocked_attempts_total{kind=\"clipboard\"} 0\n"))
        #expect(text.contains("carrel_interruptions_total{cause=\"time_limit\"} 30\n"))
        #expect(text.contains("carrel_sessions_total{outcome=\"ended\"} 4\ncarrel_sessions_total{outcome=\"failed\"} 0\ncarrel_sessions_total{outcome=\"destroyed\"} 0\n"))
        #expect(text.hasSuffix("carrel_audit_chain_ok 1\n"))
    }

    @Test("no audit chain sample while it is not known")
    func unknownChain() {
        #expect(!exposition(auditChainOK: nil).text.contains("carrel_audit_chain_ok"))
        #expect(exposition(auditChainOK: false).text.hasSuffix("carrel_audit_chain_ok 0\n"))
    }
}
