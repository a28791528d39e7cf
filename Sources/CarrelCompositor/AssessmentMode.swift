import CarrelCore
import Logging

/// `carrel --assessment -- APP`: the effects of `OnBehalfSession`'s decisions.
extension Server {
    /// A toplevel mapped: the app's first one begins the session.
    func beginSessionOnBehalf(for view: View) {
        guard var session = onBehalf, session.toplevelMapped(role: view.role) else { return }
        onBehalf = session
        logger.notice("assessment mode: \(session.appName) mapped its first window; beginning a session on its behalf (\(session.configuration))")
        assessment.beginOnBehalf(of: view.owner.client, role: view.role, configuration: session.configuration)
    }

    /// The Invigilator sent an event on the session begun on the app's behalf.
    func onBehalfSessionEvent(_ event: SessionEvent) {
        guard var session = onBehalf else {
            guidedAccessSessionEvent(event)
            return
        }
        guard let reaction = session.heard(event) else { return }
        onBehalf = session
        let message = Logger.Message(stringLiteral: reaction.log.message)
        switch reaction.log.level {
        case .info: logger.info(message)
        case .notice: logger.notice(message)
        case .warning: logger.warning(message)
        case .error: logger.error(message)
        }
        // Carrel's shutdown ends the app.
        if reaction.endApp { stop(status: 1) }
    }

    /// The app exited: its session ends as the protocol's `end` would.
    func endSessionOnBehalf() {
        guard var session = onBehalf, session.appExited() else { return }
        onBehalf = session
        assessment.endOnBehalf()
    }
}
