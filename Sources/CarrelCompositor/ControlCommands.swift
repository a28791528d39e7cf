import CarrelCore
import CarrelShim
import Glibc

/// The compositor's side of `carrelctl`: opens the control socket the
/// options name and answers each request from the session state.
extension Server {
    /// The mode `status` reports: how Carrel was started.
    var controlMode: String {
        if guidedAccess.session != nil { return "guided_access" }
        if options.kiosk.enabled { return "kiosk" }
        if options.assessmentMode != nil { return "assessment" }
        return "standard"
    }

    /// The control socket, or nil when it could not be opened and the
    /// options do not require it (logged: Carrel runs without).
    func openControlSocket() throws -> ControlSocket? {
        let control = options.control
        do {
            return try ControlSocket(path: control.socketPath, group: control.group, display: display,
                                     logger: logger) { [unowned self] request in answer(request) }
        } catch {
            if options.requireControlSocket { throw error }
            logger.warning("\(error); carrelctl is unavailable (pass --control-socket PATH to choose a path)")
            return nil
        }
    }

    func answer(_ request: ControlRequest) -> ControlResponse {
        do throws(ControlFailure) {
            switch request {
            case .status:
                return ControlResponse(ok: true, command: request.command,
                                       status: assessment.controlStatus(mode: controlMode, clients: clientCounts()))
            case .end(let reason):
                return ControlResponse(ok: true, command: request.command, outcome: try assessment.administrativeEnd(reason: reason))
            case .extend(let minutes):
                return ControlResponse(ok: true, command: request.command, outcome: try assessment.extendTimeLimit(byMinutes: minutes))
            case .lock:
                return ControlResponse(ok: true, command: request.command, outcome: try guidedLock())
            case .unlock(let passcode):
                return ControlResponse(ok: true, command: request.command, outcome: try guidedUnlock(passcode: passcode))
            }
        } catch {
            return .failure(error, command: request.command)
        }
    }

    /// Connected Wayland clients by role.
    func clientCounts() -> [Role: Int] {
        var counts: [Role: Int] = [:]
        let list = wl_display_get_client_list(display)!
        var link = list.pointee.next!
        while link != list {
            counts[role(of: wl_client_from_link(link)), default: 0] += 1
            link = link.pointee.next
        }
        return counts
    }
}
