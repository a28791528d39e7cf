/// Where carrel and carrelctl meet when neither the policy nor the command
/// line says otherwise: the policy's defaults (CarrelCore's `ControlPolicy`
/// and `AuditPolicy`), which carrelctl assumes too.
public enum CarrelPaths {
    /// The admin control socket.
    public static let controlSocket = "/run/carrel/control.sock"
    /// The audit log: the JSON-lines file records are appended to.
    public static let auditLog = "/var/log/carrel/audit.jsonl"
}
