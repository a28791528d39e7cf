import CWebKitGTKLib

// GObject's C macros (g_signal_connect, G_CALLBACK, the type casts) do not
// import into Swift; these few functions stand in for them.

/// Any GObject pointer, typed or opaque, as the raw pointer GLib's calls take.
@inline(__always) func raw<T>(_ pointer: UnsafeMutablePointer<T>?) -> gpointer? { pointer.map { gpointer($0) } }
@inline(__always) func raw(_ pointer: OpaquePointer?) -> gpointer? { pointer.map { gpointer($0) } }
@inline(__always) func typed<T>(_ pointer: OpaquePointer?) -> UnsafeMutablePointer<T>? { pointer.map { UnsafeMutablePointer<T>($0) } }
@inline(__always) func typed<T>(_ pointer: gpointer?) -> UnsafeMutablePointer<T>? { pointer.map { $0.assumingMemoryBound(to: T.self) } }
@inline(__always) func opaque<T>(_ pointer: UnsafeMutablePointer<T>?) -> OpaquePointer? { pointer.map { OpaquePointer($0) } }

/// g_signal_connect: `handler` is a @convention(c) function of the signal's C signature.
@discardableResult
func connect<F>(_ instance: gpointer?, _ signal: String, _ handler: F) -> gulong {
    g_signal_connect_data(instance, signal, unsafeBitCast(handler, to: GCallback.self), nil, nil, GConnectFlags(rawValue: 0))
}

/// A widget pointer from any GTK or WebKit widget pointer.
@inline(__always) func widget(_ pointer: OpaquePointer?) -> UnsafeMutablePointer<GtkWidget>? { typed(pointer) }

func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
