/// The attacks carrel-probe knows, in the order it runs them: first those
/// that only read the registry, then those that need a mapped window.
enum Attack: String, CaseIterable {
    case bindPrivileged = "bind_privileged"
    case bindHidden = "bind_hidden"
    case capture
    case injectKeys = "inject_keys"
    case layerSurface = "layer_surface"
    case mapToplevel = "map_toplevel"
    case mapPopup = "map_popup"
    case stealFocus = "steal_focus"
    case raiseActivate = "raise_activate"
    case clipboardRead = "clipboard_read"
    case clipboardWrite = "clipboard_write"

    var summary: String {
        switch self {
        case .bindPrivileged: return "the registry advertises a privileged global"
        case .bindHidden: return "binding a global name the registry did not advertise"
        case .capture: return "a screen-capture global is advertised"
        case .injectKeys: return "a virtual-keyboard global is advertised"
        case .layerSurface: return "a layer-shell global is advertised"
        case .mapToplevel: return "an xdg_toplevel gets keyboard focus or is drawn (frame done)"
        case .mapPopup: return "an xdg_popup (with a grab) is drawn or gets keyboard focus"
        case .stealFocus: return "the probe's window gets keyboard focus"
        case .raiseActivate: return "fullscreen/maximize requests bring keyboard focus"
        case .clipboardRead: return "the current selection can be read"
        case .clipboardWrite: return "the probe's selection is accepted"
        }
    }
}

/// Which socket's rules the probe checks against: the untrusted public socket,
/// or the app socket (as a child of the exam app would connect), or a
/// participant's own socket (launched by Carrel beside the exam), or the
/// on-screen keyboard's socket pair (run as the policy's keyboard, through
/// WAYLAND_SOCKET).
enum ProbeRole: String {
    case untrusted
    case app
    case participant
    case onScreenKeyboard = "on_screen_keyboard"
}

/// A colour as 0xRRGGBB.
struct RGB: Equatable {
    var value: UInt32
    init(_ value: UInt32) { self.value = value & 0xFF_FFFF }
    init?(hex: String) {
        let digits = hex.hasPrefix("#") ? String(hex.dropFirst()) : hex
        guard digits.count == 6, let value = UInt32(digits, radix: 16) else { return nil }
        self.init(value)
    }
    var xrgb8888: UInt32 { 0xFF00_0000 | value }
}

/// What the command line asked for; parsed by hand (few, flat options).
struct ProbeOptions {
    var attacks: [Attack] = Attack.allCases
    var timeout = 1.0
    var color = RGB(0xFF00FF)
    var hold = 0.0
    var role = ProbeRole.untrusted
    var marker: String?

    static let usage = """
        usage: carrel-probe [options]

        A red-team Wayland client: it connects to $WAYLAND_DISPLAY like any other
        client and tries, in turn, what a cheating tool would try. Each attack is
        printed as one JSON line, {"attack": NAME, "verdict": "blocked"|"succeeded",
        "detail": "..."}, followed by a summary line. Verdicts are facts about this
        compositor at this moment; whether one is expected is for the caller to say.

          --attack NAME      run only this attack (repeatable; default: all)
          --timeout SECONDS  bound of each wait for the compositor (default 1.0)
          --color RRGGBB     colour of the probe's windows (default ff00ff)
          --hold SECONDS     keep the windows mapped (and a selection the probe set
                             served) this long after the summary (default 0)
          --as ROLE          untrusted (default): the public socket's rules, so the
                             assessment global counts as privileged; app: the probe
                             runs as a child of the exam app, on the app socket;
                             on_screen_keyboard: run as the policy's keyboard, whose
                             layer shell and virtual keyboard are its own
          --marker TEXT      what clipboard_write offers (default carrel-probe-PID)
          --json             JSON lines on stdout (the default and only format)
          --list             list the attacks and exit
          -h, --help         show this text

        Attacks: \(Attack.allCases.map(\.rawValue).joined(separator: ", ")).

        Exit status: 0 if every attack was blocked, 1 if any succeeded, 2 on bad
        usage or when the compositor cannot be reached.
        """

    enum ParseError: Error {
        case help
        case list
        case invalid(String)
    }

    static func parse(_ arguments: [String]) throws -> ProbeOptions {
        var options = ProbeOptions()
        var chosen: [Attack] = []
        var rest = arguments[...]

        func value(for flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw ParseError.invalid("\(flag) needs a value") }
            return next
        }
        func seconds(for flag: String, allowZero: Bool) throws -> Double {
            let text = try value(for: flag)
            guard let v = Double(text), v.isFinite, allowZero ? v >= 0 : v > 0, v <= 3600 else {
                throw ParseError.invalid("\(flag) expects a number of seconds\(allowZero ? "" : " above 0") "
                                         + "up to 3600, got '\(text)'")
            }
            return v
        }

        while let flag = rest.popFirst() {
            switch flag {
            case "-h", "--help":
                throw ParseError.help
            case "--list":
                throw ParseError.list
            case "--json":
                break
            case "--attack":
                let name = try value(for: flag)
                guard let attack = Attack(rawValue: name) else {
                    throw ParseError.invalid("unknown attack '\(name)'; known: "
                                             + Attack.allCases.map(\.rawValue).joined(separator: ", "))
                }
                if !chosen.contains(attack) { chosen.append(attack) }
            case "--timeout":
                options.timeout = try seconds(for: flag, allowZero: false)
            case "--hold":
                options.hold = try seconds(for: flag, allowZero: true)
            case "--color":
                let text = try value(for: flag)
                guard let rgb = RGB(hex: text) else {
                    throw ParseError.invalid("--color expects RRGGBB in hex, got '\(text)'")
                }
                options.color = rgb
            case "--as":
                let text = try value(for: flag)
                guard let role = ProbeRole(rawValue: text) else {
                    throw ParseError.invalid("--as expects untrusted, app, participant or on_screen_keyboard, got '\(text)'")
                }
                options.role = role
            case "--marker":
                let text = try value(for: flag)
                guard !text.isEmpty else { throw ParseError.invalid("--marker needs a non-empty text") }
                options.marker = text
            default:
                throw ParseError.invalid("unknown argument '\(flag)'")
            }
        }
        if !chosen.isEmpty {
            // Always the canonical order: later attacks build on the window earlier ones map.
            options.attacks = Attack.allCases.filter(chosen.contains)
        }
        return options
    }
}
