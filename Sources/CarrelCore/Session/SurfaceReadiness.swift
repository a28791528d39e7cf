/// What the compositor knows about the surface named in `begin`.
public enum SurfaceReadiness: Sendable, Hashable {
    /// A mapped xdg_toplevel of the client.
    case mappedToplevel
    /// An xdg_toplevel that has not been mapped yet: `failed(surface_not_ready)`.
    case unmappedToplevel
    /// No xdg_toplevel role: a client bug, the `bad_surface` protocol error.
    case notToplevel
}
