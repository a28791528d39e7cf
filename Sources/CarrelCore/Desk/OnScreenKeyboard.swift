/// The on-screen keyboard's band: what a layer surface of the
/// on-screen-keyboard role may be, and where it goes.
///
/// The keyboard is one bottom-anchored surface on the layer above windows
/// (layer shell's `top`, where wvkbd puts itself), never taking keyboard
/// focus, as wide as the primary output and at most `maximumShare` of its
/// height. Anything else it asks for is refused; a buffer or subsurface
/// reaching beyond the band is not drawn, so it cannot cover the exam.
public struct OnScreenKeyboard: Sendable, Equatable {
    /// Layer shell's layers, numbered as the protocol numbers them.
    public enum Layer: UInt32, Sendable, CustomStringConvertible {
        case background = 0, bottom = 1, top = 2, overlay = 3

        public var description: String {
            switch self {
            case .background: return "background"
            case .bottom: return "bottom"
            case .top: return "top"
            case .overlay: return "overlay"
            }
        }
    }

    /// Layer shell's anchor edges, as the protocol's bits.
    public struct Anchor: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let top = Anchor(rawValue: 1)
        public static let bottom = Anchor(rawValue: 2)
        public static let left = Anchor(rawValue: 4)
        public static let right = Anchor(rawValue: 8)
    }

    /// What a layer surface asks for (its committed state).
    public struct Request: Sendable, Equatable {
        /// `nil`: a layer number the protocol does not define.
        public var layer: Layer?
        public var anchor: Anchor
        /// Whether it asks for keyboard focus (any mode but `none`).
        public var keyboardInteractive: Bool
        /// The height it asks for; 0 leaves it to the compositor.
        public var desiredHeight: Int

        public init(layer: Layer?, anchor: Anchor, keyboardInteractive: Bool, desiredHeight: Int) {
            self.layer = layer
            self.anchor = anchor
            self.keyboardInteractive = keyboardInteractive
            self.desiredHeight = desiredHeight
        }
    }

    /// At most this share of the output's height (numerator, denominator):
    /// the exam keeps the larger part of the screen.
    public static let maximumShare = (2, 5)
    /// The height given when the keyboard leaves it to Carrel: a quarter.
    public static let defaultShare = (1, 4)

    /// Why `request` cannot be the keyboard's band, or nil when it can.
    public static func refusal(_ request: Request) -> String? {
        guard request.layer == .top else {
            return "asked for the \(request.layer.map(\.description) ?? "unknown") layer; only the top layer is allowed"
        }
        guard request.anchor.contains(.bottom), !request.anchor.contains(.top) else {
            return "is not anchored to the bottom edge alone; the keyboard's band is at the bottom of the output"
        }
        guard !request.keyboardInteractive else {
            return "asked for keyboard focus; the on-screen keyboard never takes keys from the physical keyboard"
        }
        return nil
    }

    /// The band on `output` for a keyboard asking for `desiredHeight`
    /// (0: Carrel chooses): full width, at the bottom, at least one pixel
    /// and at most `maximumShare` of the height.
    public static func band(desiredHeight: Int, output: Rect) -> Rect {
        let maximum = max(1, output.height * maximumShare.0 / maximumShare.1)
        let wanted = desiredHeight > 0 ? desiredHeight : output.height * defaultShare.0 / defaultShare.1
        let height = min(max(wanted, 1), maximum)
        return Rect(x: output.x, y: output.y + output.height - height, width: output.width, height: height)
    }

    /// Whether a surface whose contents (with its subsurfaces) cover
    /// `extents`, relative to its own origin, stays inside a band of `size`.
    public static func fits(extents: Rect, in size: Size) -> Bool {
        extents.x >= 0 && extents.y >= 0
            && extents.x + extents.width <= size.width && extents.y + extents.height <= size.height
    }

    /// Whether the keyboard runs under `restrictions`: only during a session
    /// whose configuration allows `on_screen_keyboard`.
    public static func runs(under restrictions: RestrictionSet?) -> Bool {
        restrictions?.allowedFeatures.contains(.onScreenKeyboard) ?? false
    }

    /// The client whose surface is the band, once one was accepted.
    public internal(set) var client: ClientID?
    /// The band's height on the primary output, once placed.
    public internal(set) var height: Int?

    public init() {}
}
