import CarrelCore

extension Policy {
    /// One line saying what this policy decides, for `carrel check-policy`
    /// and the start-up log.
    public var summary: String {
        let roles = session.entitledRoles.map(\.rawValue).sorted()
        let participantIDs = participants.keys.sorted()
        let capture = capture.enabledOutsideSessions
            ? "capture outside sessions for \(capture.roles.map(\.rawValue).sorted().joined(separator: ", "))"
            : "no capture"
        let control = "control \(self.control.socketPath) (\(self.control.group.map { "root and group \($0)" } ?? "root only"))"
        return [
            "sessions by \(roles.isEmpty ? "nobody" : roles.joined(separator: ", "))",
            "time limit \(session.effectiveDefaultTimeLimit / 60) min by default, \(session.effectiveMaximumTimeLimit / 60) min at most",
            participantIDs.isEmpty ? "no participants" : "participants \(participantIDs.joined(separator: ", "))",
            inputMethod.map { "input method \($0.command.first ?? "")" } ?? "no input method",
            "on-screen keyboard \(onScreenKeyboard.command.first ?? "") when a session allows it",
            capture,
            emergencyBinding.map { "emergency binding \($0)" } ?? "no emergency binding",
            outputs.allowHotplugDuringSession ? "hot-plug tolerated" : "hot-plug interrupts",
            kiosk.enabled ? "kiosk on (\(kiosk.maximumRelaunches) relaunches)" : "kiosk off",
            appLock.allowedExecutables.isEmpty ? "no app lock" : "app lock for \(appLock.allowedExecutables.sorted().joined(separator: ", "))",
            guidedAccess.passcodeHash == nil ? "Guided Access off" : "Guided Access on",
            control,
            providers.enabledNames.isEmpty ? "no providers" : "providers \(providers.enabledNames.joined(separator: ", "))",
            preconditions.waived.isEmpty ? "every precondition checked"
                : "preconditions waived (testing only): \(preconditions.waived.sorted().map(\.rawValue).joined(separator: ", "))",
            preconditions.refuseVirtualMachine ? "virtual machines refused" : "virtual machines reported",
            "audit log \(audit.path)",
            attestation.keyPath.map { "attestation key \($0)" } ?? "no attestation key",
            metrics.textfileDirectory.map { "metrics in \($0)" } ?? "no metrics",
        ].joined(separator: "; ")
    }
}
