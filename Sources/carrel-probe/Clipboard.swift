import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// A wl_data_offer and the MIME types it announced.
final class DataOffer {
    let offer: OpaquePointer
    private(set) var mimeTypes: [String] = []

    init(offer: OpaquePointer) {
        self.offer = offer
        wl_data_offer_add_listener(offer, offerListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { wl_data_offer_destroy(offer) }

    fileprivate func handleOffer(_ mime: String) { mimeTypes.append(mime) }
}

/// The probe's wl_data_device: every selection the compositor sends it.
final class ClipboardWatcher {
    let device: OpaquePointer
    /// Offers announced (data_offer) but not yet named by selection/enter.
    private var announced: [DataOffer] = []
    private(set) var selection: DataOffer?
    private var dragOffer: DataOffer?
    private(set) var selectionEvents = 0
    private(set) var offersSeen: [[String]] = []

    init(manager: OpaquePointer, seat: OpaquePointer) {
        device = wl_data_device_manager_get_data_device(manager, seat)
        wl_data_device_add_listener(device, deviceListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        announced.removeAll()
        selection = nil
        dragOffer = nil
        wl_data_device_destroy(device)
    }

    func setSelection(_ source: OpaquePointer?, serial: UInt32) {
        wl_data_device_set_selection(device, source, serial)
    }

    fileprivate func handleDataOffer(_ offer: OpaquePointer?) {
        guard let offer else { return }
        announced.append(DataOffer(offer: offer))
    }

    private func take(_ offer: OpaquePointer?) -> DataOffer? {
        guard let offer, let index = announced.firstIndex(where: { $0.offer == offer }) else { return nil }
        return announced.remove(at: index)
    }

    fileprivate func handleSelection(_ offer: OpaquePointer?) {
        selectionEvents += 1
        selection = take(offer)
        if let selection { offersSeen.append(selection.mimeTypes) }
    }

    fileprivate func handleEnter(_ offer: OpaquePointer?) { dragOffer = take(offer) }
    fileprivate func handleLeave() { dragOffer = nil }
}

/// A selection the probe offers: `marker` in every text type, plus a type of
/// its own so the probe can recognise its selection when it comes back.
final class ProbeSource {
    static let ownType = "application/x-carrel-probe"
    static let textTypes = ["text/plain;charset=utf-8", "text/plain", "UTF8_STRING", "TEXT", "STRING"]

    let source: OpaquePointer
    let marker: String
    private(set) var cancelled = false
    private(set) var cancelledAt: Double?
    private(set) var sends: [String] = []

    init(manager: OpaquePointer, marker: String) {
        self.marker = marker
        source = wl_data_device_manager_create_data_source(manager)
        wl_data_source_add_listener(source, sourceListener, Unmanaged.passUnretained(self).toOpaque())
        for type in ProbeSource.textTypes + [ProbeSource.ownType] {
            wl_data_source_offer(source, type)
        }
    }

    deinit { wl_data_source_destroy(source) }

    fileprivate func handleSend(mime: String, fd: Int32) {
        sends.append(mime)
        // Whoever asked gets the marker; a reader that went away must not
        // kill the probe with SIGPIPE (ignored in main), so errors are dropped.
        let bytes = Array(marker.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { break }
            offset += written
        }
        close(fd)
    }

    fileprivate func handleCancelled() {
        cancelled = true
        if cancelledAt == nil { cancelledAt = now() }
    }
}

private let offerListener = staticListener(wl_data_offer_listener(
    offer: { data, _, mime in
        guard let data, let mime else { return }
        Unmanaged<DataOffer>.fromOpaque(data).takeUnretainedValue().handleOffer(String(cString: mime))
    },
    source_actions: { _, _, _ in },
    action: { _, _, _ in }
))

private func clipboard(_ data: UnsafeMutableRawPointer?) -> ClipboardWatcher {
    Unmanaged<ClipboardWatcher>.fromOpaque(data!).takeUnretainedValue()
}

private let deviceListener = staticListener(wl_data_device_listener(
    data_offer: { data, _, offer in clipboard(data).handleDataOffer(offer) },
    enter: { data, _, _, _, _, _, offer in clipboard(data).handleEnter(offer) },
    leave: { data, _ in clipboard(data).handleLeave() },
    motion: { _, _, _, _, _ in },
    drop: { _, _ in },
    selection: { data, _, offer in clipboard(data).handleSelection(offer) }
))

private func source(_ data: UnsafeMutableRawPointer?) -> ProbeSource {
    Unmanaged<ProbeSource>.fromOpaque(data!).takeUnretainedValue()
}

private let sourceListener = staticListener(wl_data_source_listener(
    target: { _, _, _ in },
    send: { data, _, mime, fd in
        source(data).handleSend(mime: mime.map { String(cString: $0) } ?? "", fd: fd)
    },
    cancelled: { data, _ in source(data).handleCancelled() },
    dnd_drop_performed: { _, _ in },
    dnd_finished: { _, _ in },
    action: { _, _, _ in }
))
