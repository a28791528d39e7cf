import CarrelShim

/// Asks every client for no client-side decorations: a kiosk draws none.
final class Decoration {
    private let decoration: UnsafeMutablePointer<wlr_xdg_toplevel_decoration_v1>
    private var listeners = ListenerBag()
    private unowned let server: Server

    init(_ decoration: UnsafeMutablePointer<wlr_xdg_toplevel_decoration_v1>, server: Server) {
        self.decoration = decoration
        self.server = server
        listeners.on(&decoration.pointee.events.request_mode) { [unowned self] _ in applyMode() }
        listeners.on(&decoration.pointee.events.destroy) { [unowned self] _ in
            detach()
            server.decorationDestroyed(self)
        }
        applyMode()
    }

    private func applyMode() {
        WlrootsVersion.setServerSideDecoration(decoration)
    }

    func detach() { listeners.disconnectAll() }
}
