/// Copies a listener struct to memory that is never freed: libwayland keeps
/// the pointer for as long as the proxy lives, and listeners are per-type
/// constants.
public func staticListener<Listener>(_ listener: Listener) -> UnsafePointer<Listener> {
    let storage = UnsafeMutablePointer<Listener>.allocate(capacity: 1)
    storage.initialize(to: listener)
    return UnsafePointer(storage)
}
