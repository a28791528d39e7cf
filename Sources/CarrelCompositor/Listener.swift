import CarrelShim

/// A Swift handler attached to one wl_signal.
///
/// The C side is a `carrel_listener` allocated here so its address never moves
/// while libwayland links it into a signal's list. Owners keep their listeners
/// and call `disconnect()` from the wlroots object's destroy handler, before
/// the object goes away; `deinit` only backs that up.
final class Listener {
    private let storage: UnsafeMutablePointer<carrel_listener>
    private let handler: (UnsafeMutableRawPointer?) -> Void

    private static let trampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { context, data in
        Unmanaged<Listener>.fromOpaque(context!).takeUnretainedValue().handler(data)
    }

    init(_ signal: UnsafeMutablePointer<wl_signal>, _ handler: @escaping (UnsafeMutableRawPointer?) -> Void) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: carrel_listener())
        self.handler = handler
        carrel_listener_connect(storage, signal, Listener.trampoline, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Listens for `client` going away (libwayland has no signal getter for it).
    init(clientDestroyOf client: OpaquePointer, _ handler: @escaping (UnsafeMutableRawPointer?) -> Void) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: carrel_listener())
        self.handler = handler
        carrel_listener_connect_client_destroy(storage, client, Listener.trampoline, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Listens for every client `display` creates.
    init(clientCreatedOn display: OpaquePointer, _ handler: @escaping (UnsafeMutableRawPointer?) -> Void) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: carrel_listener())
        self.handler = handler
        carrel_listener_connect_client_created(storage, display, Listener.trampoline, Unmanaged.passUnretained(self).toOpaque())
    }

    func disconnect() {
        carrel_listener_disconnect(storage)
    }

    deinit {
        carrel_listener_disconnect(storage)
        storage.deallocate()
    }
}

/// A set of listeners that belong to one wlroots object and go together.
struct ListenerBag {
    private var listeners: [Listener] = []

    mutating func on(_ signal: UnsafeMutablePointer<wl_signal>, _ handler: @escaping (UnsafeMutableRawPointer?) -> Void) {
        listeners.append(Listener(signal, handler))
    }

    /// Unlinks every listener; call from the object's destroy handler.
    mutating func disconnectAll() {
        for listener in listeners { listener.disconnect() }
        listeners.removeAll()
    }
}
