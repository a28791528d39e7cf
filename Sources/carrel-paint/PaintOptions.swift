/// A colour as 0xRRGGBB, parsed from `RRGGBB` on the command line.
struct RGB: Equatable {
    var value: UInt32

    init(_ value: UInt32) { self.value = value & 0xFF_FFFF }

    init?(hex: String) {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6, let value = UInt32(digits, radix: 16) else { return nil }
        self.init(value)
    }

    /// The same colour with the low four bits of each channel flipped by
    /// `step`: close to the original, but different from one step to the
    /// next, so an animated frame really changes its pixels.
    func varied(by step: UInt32) -> RGB {
        let nibble = step & 0x0F
        return RGB(value ^ (nibble << 16 | nibble << 8 | nibble))
    }

    /// The pixel for an XRGB8888 buffer (alpha byte set, though ignored).
    var xrgb8888: UInt32 { 0xFF00_0000 | value }
}

/// A width and height in surface pixels, parsed from `WxH`.
struct PixelSize: Equatable, CustomStringConvertible {
    var width: Int32
    var height: Int32

    init(width: Int32, height: Int32) { self.width = width; self.height = height }

    init?(_ text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let width = Int32(parts[0]), let height = Int32(parts[1]),
              (1...16384).contains(width), (1...16384).contains(height)
        else { return nil }
        self.init(width: width, height: height)
    }

    var isZero: Bool { width == 0 || height == 0 }
    var description: String { "\(width)x\(height)" }
}

/// What the command line asked for. Parsed by hand: this target has no
/// argument-parser dependency, and the options are few and flat.
struct PaintOptions: Equatable {
    var color = RGB(0x3366cc)
    /// Cells this many pixels square, alternating `color` and white from
    /// the top-left corner (a pattern screenshots can check for scaling).
    var checker: Int?
    var dialogColor = RGB(0xcc3333)
    /// Used when the compositor leaves the size to us (configure 0x0).
    var size = PixelSize(width: 640, height: 480)
    /// Drawn whatever the compositor configures (benchmarks).
    var fixedSize: PixelSize?
    var animate = false
    var exitAfterFrames: Int?
    var milestones = false
    var parent = false
    /// Begin and end this many assessment sessions once mapped.
    var assessCycles: Int?
    /// With `assessCycles`: ask for a signed statement in each session before ending it.
    var attest = false
    /// Begin one assessment session once mapped and keep it.
    var holdSession = false
    /// `--session`'s configuration allows `screen_magnifier`.
    var allowMagnifier = false
    /// End the held session this many milliseconds after `began`.
    var endAfterMs: Int?
    /// Print `frame N NS` for every frame callback.
    var printFrames = false
    /// Commit a new frame every this many milliseconds, ignoring frame callbacks.
    var commitIntervalMs: Int?
    /// Every this many unthrottled commits, toggle fullscreen.
    var raiseEvery: Int?
    /// Report whether any screen-capture global is offered.
    var tryCapture = false
    /// Print every key delivered to the window.
    var printKeys = false

    static let usage = """
        usage: carrel-paint [options]

        A Wayland client that shows one window filled with a solid colour.

          --color RRGGBB          window colour (default 3366cc)
          --checker N             a checkerboard of NxN-pixel cells, the window
                                  colour and white, instead of a solid colour
          --size WxH              size to draw when the compositor leaves it to
                                  the client (default 640x480)
          --fixed-size WxH        always draw this size, whatever is configured
          --animate               redraw on every frame callback, colour varying
          --still                 draw once and stay idle (default)
          --exit-after-frames N   exit 0 after N frame callbacks
          --milestones            print `milestone NAME MONOTONIC_NS` lines for
                                  connected, first_configure, first_commit and
                                  first_frame_done
          --parent                also map a 300x200 child dialog
                                  (xdg_toplevel.set_parent)
          --dialog-color RRGGBB   dialog colour (default cc3333)

        Benchmarks (carrel-assessment-v1 and hostile load):
          --assess N              once mapped, N times: begin a session with a
                                  null configuration, wait for began, end it,
                                  wait for ended; print `milestone begin|began|
                                  end|ended NS` each time, then exit 0. On
                                  failed print `assess failed REASON MESSAGE`
                                  and exit 1
          --attest                with --assess: after began, ask for a signed
                                  statement (32-byte nonce) and print `milestone
                                  attested NS` when it arrives, then end; a
                                  refusal prints `assess attestation_failed
                                  REASON MESSAGE` and exits 1
          --session               once mapped, begin one session (null
                                  configuration) and keep it; prints
                                  `milestone begin|began NS`
          --allow-magnifier       with --session: the configuration allows
                                  screen_magnifier
          --end-after-ms MS       with --session: end it MS milliseconds after
                                  began (prints `milestone end|ended NS`)
          --print-frames          print `frame N NS` for every frame callback
          --print-keys            print `key CODE pressed|released` (evdev
                                  codes) for every key delivered to the window
          --commit-interval MS    commit a new frame every MS milliseconds,
                                  whatever the frame callbacks say
          --raise-every N         with --commit-interval: every N commits ask
                                  for fullscreen, then to leave it, by turns
          --try-capture           print `capture none`, or `capture offered
                                  NAME` for each screen-capture global offered
          -h, --help              show this text

        Connects to $WAYLAND_DISPLAY. Exits 0 when the window is closed, 1 when
        the compositor cannot be reached or lacks a needed global, or the
        connection drops, 2 on bad usage.
        """

    enum ParseError: Error, Equatable {
        case helpRequested
        case invalid(String)
    }

    /// Parses `arguments` without the program name.
    static func parse(_ arguments: [String]) throws -> PaintOptions {
        var options = PaintOptions()
        var rest = arguments[...]

        func value(for flag: String) throws -> String {
            guard let next = rest.popFirst() else {
                throw ParseError.invalid("\(flag) needs a value")
            }
            return next
        }

        while let flag = rest.popFirst() {
            switch flag {
            case "-h", "--help":
                throw ParseError.helpRequested
            case "--color", "--dialog-color":
                let text = try value(for: flag)
                guard let rgb = RGB(hex: text) else {
                    throw ParseError.invalid("\(flag) expects RRGGBB in hex, got '\(text)'")
                }
                if flag == "--color" { options.color = rgb } else { options.dialogColor = rgb }
            case "--size", "--fixed-size":
                let text = try value(for: flag)
                guard let size = PixelSize(text) else {
                    throw ParseError.invalid("\(flag) expects WxH with each side in 1...16384, got '\(text)'")
                }
                if flag == "--size" { options.size = size } else { options.fixedSize = size }
            case "--checker":
                let text = try value(for: flag)
                guard let cell = Int(text), (1...512).contains(cell) else {
                    throw ParseError.invalid("\(flag) expects a cell size in pixels, 1...512, got '\(text)'")
                }
                options.checker = cell
            case "--animate":
                options.animate = true
            case "--still":
                options.animate = false
            case "--exit-after-frames":
                let text = try value(for: flag)
                guard let count = Int(text), count > 0 else {
                    throw ParseError.invalid("\(flag) expects a positive whole number, got '\(text)'")
                }
                options.exitAfterFrames = count
            case "--milestones":
                options.milestones = true
            case "--parent":
                options.parent = true
            case "--assess", "--commit-interval", "--raise-every":
                let text = try value(for: flag)
                guard let number = Int(text), number > 0 else {
                    throw ParseError.invalid("\(flag) expects a positive whole number, got '\(text)'")
                }
                switch flag {
                case "--assess": options.assessCycles = number
                case "--commit-interval": options.commitIntervalMs = number
                default: options.raiseEvery = number
                }
            case "--session":
                options.holdSession = true
            case "--attest":
                options.attest = true
            case "--allow-magnifier":
                options.allowMagnifier = true
            case "--end-after-ms":
                let text = try value(for: flag)
                guard let ms = Int(text), ms >= 0 else {
                    throw ParseError.invalid("\(flag) expects milliseconds, a whole number from 0, got '\(text)'")
                }
                options.endAfterMs = ms
            case "--print-frames":
                options.printFrames = true
            case "--print-keys":
                options.printKeys = true
            case "--try-capture":
                options.tryCapture = true
            default:
                throw ParseError.invalid("unknown argument '\(flag)'")
            }
        }
        if options.attest && options.assessCycles == nil {
            throw ParseError.invalid("--attest needs --assess N")
        }
        if options.assessCycles != nil && options.holdSession {
            throw ParseError.invalid("--assess and --session exclude each other")
        }
        if (options.allowMagnifier || options.endAfterMs != nil) && !options.holdSession {
            throw ParseError.invalid("--allow-magnifier and --end-after-ms need --session")
        }
        if options.endAfterMs != nil && options.commitIntervalMs != nil {
            throw ParseError.invalid("--end-after-ms and --commit-interval exclude each other")
        }
        if options.raiseEvery != nil && options.commitIntervalMs == nil {
            throw ParseError.invalid("--raise-every needs --commit-interval")
        }
        return options
    }
}
