// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The wlroots Carrel is built against: CARREL_WLROOTS=0.15 (the default,
// Debian bookworm), 0.17 (Ubuntu 24.04), 0.18 (Debian trixie), 0.19 (Ubuntu
// 26.04) or 0.20 (upstream). It picks the pkg-config name and a define that
// the shim (C) and the compositor's WlrootsVersion (Swift) test; nothing else
// in the code base knows the version.
let wlrootsVersion = ProcessInfo.processInfo.environment["CARREL_WLROOTS"].flatMap { $0.isEmpty ? nil : $0 } ?? "0.15"
let wlrootsPkgConfig: String
let wlrootsDefine: String?
// Swift also gets one condition per release a feature appeared in
// (CARREL_WLROOTS_SINCE_0_17 holds for 0.17 and every later one).
let wlrootsSince: [String]
switch wlrootsVersion {
case "0.15": (wlrootsPkgConfig, wlrootsDefine, wlrootsSince) = ("wlroots", nil, [])
case "0.17": (wlrootsPkgConfig, wlrootsDefine, wlrootsSince) = ("wlroots", "CARREL_WLROOTS_0_17", ["0_17"])
case "0.18": (wlrootsPkgConfig, wlrootsDefine, wlrootsSince) = ("wlroots-0.18", "CARREL_WLROOTS_0_18", ["0_17", "0_18"])
case "0.19": (wlrootsPkgConfig, wlrootsDefine, wlrootsSince) = ("wlroots-0.19", "CARREL_WLROOTS_0_19", ["0_17", "0_18", "0_19"])
case "0.20": (wlrootsPkgConfig, wlrootsDefine, wlrootsSince) = ("wlroots-0.20", "CARREL_WLROOTS_0_20", ["0_17", "0_18", "0_19", "0_20"])
default:
    fatalError("CARREL_WLROOTS is '\(wlrootsVersion)'; expected 0.15, 0.17, 0.18, 0.19 or 0.20 (unset means 0.15)")
}
let wlrootsCSettings: [CSetting] = wlrootsDefine.map { [.define($0)] } ?? []
let wlrootsSwiftSettings: [SwiftSetting] = (wlrootsDefine.map { [.define($0)] } ?? [])
    + wlrootsSince.map { .define("CARREL_WLROOTS_SINCE_\($0)") }

// wlroots' C API is imported through CarrelShim; the system-library targets
// below only contribute pkg-config flags and link lines.
let linkOnly: [Target] = [
    .systemLibrary(name: "CWlrootsLib", path: "CModules/CWlrootsLib", pkgConfig: wlrootsPkgConfig,
                   providers: [.apt(["libwlroots-dev"])]),
    .systemLibrary(name: "CWaylandServerLib", path: "CModules/CWaylandServerLib", pkgConfig: "wayland-server",
                   providers: [.apt(["libwayland-dev"])]),
    .systemLibrary(name: "CWaylandClientLib", path: "CModules/CWaylandClientLib", pkgConfig: "wayland-client",
                   providers: [.apt(["libwayland-dev"])]),
    .systemLibrary(name: "CXkbcommonLib", path: "CModules/CXkbcommonLib", pkgConfig: "xkbcommon",
                   providers: [.apt(["libxkbcommon-dev"])]),
    .systemLibrary(name: "CSystemdLib", path: "CModules/CSystemdLib", pkgConfig: "libsystemd",
                   providers: [.apt(["libsystemd-dev"])]),
    .systemLibrary(name: "CPixmanLib", path: "CModules/CPixmanLib", pkgConfig: "pixman-1",
                   providers: [.apt(["libpixman-1-dev"])]),
    // The exception: its header includes <cairo.h>, which the demo exam and the
    // compositor's own prompt and banner (Overlay.swift) call.
    .systemLibrary(name: "CCairoLib", path: "CModules/CCairoLib", pkgConfig: "cairo",
                   providers: [.apt(["libcairo2-dev"])]),
    // Also exposes its API: CarrelSEB inflates and deflates .seb files with it.
    .systemLibrary(name: "CZlibLib", path: "CModules/CZlibLib", pkgConfig: "zlib",
                   providers: [.apt(["zlib1g-dev"])]),
]

// Swift 5 mode for the targets that hold C pointers: they live on the one
// Wayland event-loop thread, which strict Sendable checking cannot see.
let cSideSettings: [SwiftSetting] = [.swiftLanguageMode(.v5)]

// CarrelCompositor and carrel see only the members of modules they import
// themselves: otherwise a call like `text.contains("..")` quietly resolves to
// Foundation's overload, visible through a dependency's imports (TOMLKit's).
// The shipped carrel does not link Foundation, CoreFoundation or ICU
// (meson-helpers/release-flags: megabytes resident, milliseconds before the
// socket), so such a call would break its release build.
let compositorSettings: [SwiftSetting] = cSideSettings + [.enableUpcomingFeature("MemberImportVisibility")]

// Release builds of carrel link with lld where it is on the PATH (Swift's
// Linux toolchains ship it): relative relocations packed (DT_RELR, glibc
// 2.36+: 17 KB instead of the 2 MB of .rela.dyn the loader reads at every
// start) and only the symbols shared libraries use exported (the static Swift
// stdlib's link line exports all 13,000), together 3 MB less resident
// memory; and the functions a running compositor uses laid out together
// (link/carrel.order, from meson-helpers/generate-link-order): the kernel maps
// executable pages 64 KB around each one touched, so scattered code costs
// 4 MB more. And the C++ library linked statically (link/static-libstdc++):
// 2 MB less resident than mapping libstdc++.so.
let lldOnPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .contains { FileManager.default.isExecutableFile(atPath: "\($0)/ld.lld") }
let carrelLinkerSettings: [LinkerSetting] = lldOnPath
    ? [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                     "-L\(Context.packageDirectory)/link/static-libstdc++",
                     "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/link/carrel.order",
                     "-Xlinker", "--no-warn-symbol-ordering"],
                    .when(platforms: [.linux], configuration: .release))]
    : []

// carrel-browser, the exam browser for web exams, needs WebKitGTK 6.0
// (Debian's libwebkitgtk-6.0-dev). CARREL_BROWSER=1 builds it and fails
// without WebKit (test-all and CI set it), 0 leaves it out, unset builds it
// when webkitgtk-6.0.pc is installed: the compositor builds without WebKit.
// (After installing WebKit, `touch Package.swift` so SwiftPM reads this again.)
let browserSetting = ProcessInfo.processInfo.environment["CARREL_BROWSER"].flatMap { $0.isEmpty ? nil : $0 } ?? "auto"
let pkgConfigDirs = (ProcessInfo.processInfo.environment["PKG_CONFIG_PATH"] ?? "").split(separator: ":").map(String.init)
    + ["/usr/lib/x86_64-linux-gnu/pkgconfig", "/usr/lib/aarch64-linux-gnu/pkgconfig", "/usr/lib64/pkgconfig",
       "/usr/lib/pkgconfig", "/usr/share/pkgconfig", "/usr/local/lib/pkgconfig"]
let webkitInstalled = pkgConfigDirs.contains { FileManager.default.fileExists(atPath: "\($0)/webkitgtk-6.0.pc") }
let buildBrowser: Bool
switch browserSetting {
case "1": buildBrowser = true
case "0": buildBrowser = false
case "auto": buildBrowser = webkitInstalled
default: fatalError("CARREL_BROWSER is '\(browserSetting)'; expected 1 (build carrel-browser), 0 (leave it out) or unset (build it when WebKitGTK 6.0 is installed)")
}
let browserProducts: [Product] = buildBrowser ? [
    .executable(name: "carrel-browser", targets: ["carrel-browser"]),
    // WebKit loads it into each web process (built by a plain `swift build`,
    // or `swift build --product CarrelBrowserExtension`).
    .library(name: "CarrelBrowserExtension", type: .dynamic, targets: ["CarrelBrowserExtension"]),
] : []
let browserTargets: [Target] = buildBrowser ? [
    .systemLibrary(name: "CWebKitGTKLib", path: "CModules/CWebKitGTKLib", pkgConfig: "webkitgtk-6.0",
                   providers: [.apt(["libwebkitgtk-6.0-dev"])]),
    .systemLibrary(name: "CWebKitExtensionLib", path: "CModules/CWebKitExtensionLib",
                   pkgConfig: "webkitgtk-web-process-extension-6.0", providers: [.apt(["libwebkitgtk-6.0-dev"])]),
    // The web process extension (C): the SEB headers on every request and
    // window.SafeExamBrowser before any page script.
    .target(
        name: "CarrelBrowserExtension",
        dependencies: ["CWebKitExtensionLib"],
        path: "CModules/CarrelBrowserExtension",
        sources: ["extension.c"],
        publicHeadersPath: "include",
        // SwiftPM links every library product with the Swift runtime (its
        // image registration), which WebKit's sandboxed web process cannot
        // see: linked in statically, its symbols kept private.
        linkerSettings: [.unsafeFlags(["-static-stdlib", "-Xlinker", "--exclude-libs", "-Xlinker", "ALL"])]
    ),
    .executableTarget(
        name: "carrel-browser",
        dependencies: ["CarrelSEB", "AssessmentKit", "CarrelWire", "CWebKitGTKLib"],
        swiftSettings: cSideSettings
    ),
] : []

let package = Package(
    name: "Carrel",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "carrel", targets: ["carrel"]),
        .executable(name: "carrelctl", targets: ["carrelctl"]),
        .executable(name: "carrel-privileged", targets: ["carrel-privileged"]),
        .library(name: "CarrelCore", targets: ["CarrelCore"]),
        .library(name: "AssessmentKit", targets: ["AssessmentKit"]),
        .library(name: "CarrelAudit", targets: ["CarrelAudit", "CarrelAttestationVerifier"]),
        .library(name: "CarrelWire", targets: ["CarrelWire"]),
    ] + browserProducts,
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: linkOnly + [
        // wayland-scanner's interface tables, shared by server and clients.
        .target(
            name: "CarrelProtocolCode",
            path: "CModules/CarrelProtocolCode",
            sources: ["generated"],
            publicHeadersPath: "include"
        ),
        .target(
            name: "CarrelShim",
            dependencies: ["CarrelProtocolCode", "CWlrootsLib", "CWaylandServerLib", "CXkbcommonLib", "CPixmanLib", "CSystemdLib"],
            path: "CModules/CarrelShim",
            sources: ["bridge.c", "memory_buffer.c", "wlroots_guards.c", "shm_pool_accounting.c", "audit_watch.c",
                      "xdg_initial_configure.c", "popup_grab.c", "process.c", "output_magnifier.c", "scene_frame.c", "scene_clip.c", "text.c",
                      "input_method_grab.c"],
            publicHeadersPath: "include",
            cSettings: wlrootsCSettings
        ),
        // The media restriction provider's sd-bus calls (MPRIS pause).
        .target(
            name: "CarrelMedia",
            dependencies: ["CSystemdLib"],
            path: "CModules/CarrelMedia",
            sources: ["media.c"],
            publicHeadersPath: "include"
        ),
        // File descriptors over a Unix socket (SCM_RIGHTS), whose cmsg macros
        // Swift cannot import: the compositor hands the privileged helper a
        // program's Wayland connection with the spawn request.
        .target(
            name: "CarrelFDPassing",
            path: "CModules/CarrelFDPassing",
            sources: ["fd_passing.c"],
            publicHeadersPath: "include"
        ),
        .target(
            name: "CarrelClientShim",
            dependencies: ["CarrelProtocolCode", "CWaylandClientLib"],
            path: "CModules/CarrelClientShim",
            sources: ["shm.c", "pointer_listener.c"],
            publicHeadersPath: "include"
        ),
        // The protocol's vocabulary, once: features, enforcement, reasons with
        // the catch-all rule, lock state, version. Pure Swift, no dependencies;
        // CarrelCore (the compositor side) and AssessmentKit (the client side) re-export it.
        .target(name: "CarrelWire"),
        .target(name: "CarrelCore", dependencies: ["CarrelWire", "CarrelHelperRequests", "CarrelControlProtocol", "CarrelJournalFormat", "CarrelMetricsFormat"]),
        // The admin control socket's vocabulary: requests and their limits,
        // responses and the status report, refusal codes, who may connect,
        // the actor an SSH key names and the ssh forced command's words.
        // Pure Swift, no dependencies; CarrelCore re-exports it (and fills the
        // status report from the Invigilator), carrelctl links only this.
        .target(name: "CarrelControlProtocol"),
        // One audit record as a systemd journal entry: its fields, MESSAGE_IDs
        // (dist/journal/carrel.catalog) and the native and export encodings.
        // Pure Swift, no dependencies; CarrelCore re-exports it and keeps
        // the pace (which records go one by one) as a decision of its own.
        .target(name: "CarrelJournalFormat"),
        // The seat's metrics file, Prometheus' text exposition format: its
        // families, labels and states. Pure Swift, no dependencies;
        // CarrelCore re-exports it and keeps following the sessions (SeatMetrics).
        .target(name: "CarrelMetricsFormat"),
        // What Carrel's processes share with the system: Unix socket addresses,
        // errno as text, bounded reads of files Carrel did not write. Glibc
        // lives here so CarrelCore imports no C module.
        .target(name: "CarrelSystem"),
        .target(
            name: "CarrelCompositor",
            dependencies: ["CarrelCore", "CarrelSystem", "CarrelShim", "CarrelMedia", "CarrelFDPassing", "CarrelPasscode", "CarrelAudit",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: compositorSettings + wlrootsSwiftSettings
        ),
        // Guided Access passcodes as salted slow hashes (swift-crypto).
        .target(
            name: "CarrelPasscode",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "_CryptoExtras", package: "swift-crypto")]
        ),
        // The audit log's records and hash chain (swift-crypto), shared by
        // carrel (which writes it) and carrelctl (which verifies and shows it).
        .target(
            name: "CarrelAudit",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // Reading a submitted statement and checking it (carrelctl, exam
        // servers): apart from CarrelAudit because it parses JSON with
        // Foundation's JSONSerialization, and the compositor, which only signs,
        // must not link Foundation (CoreFoundation and ICU: megabytes resident
        // and milliseconds before the socket).
        .target(
            name: "CarrelAttestationVerifier",
            dependencies: ["CarrelAudit"]
        ),
        // The policy file: TOML text → a validated `Policy` or every problem
        // with its line, and the --assessment CONFIG.toml file. Pure like
        // CarrelCore; the CLI reads the files.
        .target(
            name: "CarrelPolicyFile",
            dependencies: ["CarrelCore", "CarrelPasscode", .product(name: "TOMLKit", package: "TOMLKit")]
        ),
        .executableTarget(
            name: "carrel",
            dependencies: [
                "CarrelCompositor", "CarrelCore", "CarrelSystem", "CarrelPolicyFile", "CarrelPasscode", "CarrelAudit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: compositorSettings,
            linkerSettings: carrelLinkerSettings
        ),
        // The privileged helper: the few operations that need root (nftables,
        // starting programs as other users), on a socket only Carrel's user may
        // use, in a closed vocabulary (CarrelHelperRequests' PrivilegedRequest; it links no part of CarrelCore).
        .executableTarget(
            name: "carrel-privileged",
            dependencies: ["CarrelHelperRequests", "CarrelSystem", "CarrelFDPassing"]
        ),
        // The helper's closed vocabulary: requests, replies, session cgroup
        // names and the nftables ruleset. CarrelCore re-exports it; the root
        // helper links only this, not the compositor's decisions.
        .target(name: "CarrelHelperRequests"),
        // The administrator's control tool: talks to carrel's control socket
        // in its vocabulary (CarrelControlProtocol), not the Desk's.
        .executableTarget(
            name: "carrelctl",
            dependencies: ["CarrelControlProtocol", "CarrelSystem", "CarrelPasscode", "CarrelAudit", "CarrelAttestationVerifier", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // A small Wayland client for tests and benchmarks: paints a solid colour
        // or animates, and timestamps its milestones with CLOCK_MONOTONIC.
        // The Wayland client plumbing carrel-paint, carrel-probe and the demo
        // exam share: connection, registry, bounded waits, shm buffers.
        .target(name: "WaylandClientSupport", dependencies: ["CarrelClientShim"], swiftSettings: cSideSettings),
        .executableTarget(
            name: "carrel-paint",
            dependencies: ["CarrelClientShim", "WaylandClientSupport"],
            path: "Sources/carrel-paint",
            swiftSettings: cSideSettings
        ),
        // Red-team client: tries each attack and prints a JSON verdict.
        .executableTarget(name: "carrel-probe", dependencies: ["CarrelClientShim", "WaylandClientSupport", "CarrelWire"],
                          swiftSettings: cSideSettings),
        // The tests' shared helpers (one seeded random generator).
        .target(name: "CarrelTestSupport", path: "Tests/CarrelTestSupport"),
        .testTarget(name: "CarrelCoreTests", dependencies: ["CarrelCore", "CarrelSystem", "CarrelTestSupport"]),
        .testTarget(name: "CarrelControlProtocolTests", dependencies: ["CarrelControlProtocol"]),
        .testTarget(name: "CarrelJournalFormatTests", dependencies: ["CarrelJournalFormat"]),
        .testTarget(name: "CarrelMetricsFormatTests", dependencies: ["CarrelMetricsFormat"]),
        .testTarget(name: "CarrelAuditTests", dependencies: ["CarrelAudit", "CarrelAttestationVerifier"]),
        .testTarget(name: "CarrelPolicyFileTests", dependencies: ["CarrelPolicyFile", "CarrelPasscode", "CarrelCore"]),
        // Safe Exam Browser configurations: .seb files in all their forms, the
        // Config Key as Moodle computes it, the URL filter, the quit password.
        // Pure Swift (no WebKit), so it builds and tests everywhere.
        .target(
            name: "CarrelSEB",
            dependencies: ["CZlibLib", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "_CryptoExtras", package: "swift-crypto")]
        ),
        .testTarget(name: "CarrelSEBTests", dependencies: ["CarrelSEB"]),
        // The client library for exam apps, the demo exam's pure logic, and the demo.
        .target(name: "AssessmentKit", dependencies: ["CarrelWire", "CarrelClientShim"], swiftSettings: cSideSettings),
        .target(name: "DemoExamLogic", dependencies: ["AssessmentKit", "CarrelWire"]),
        .executableTarget(
            name: "carrel-demo-exam",
            dependencies: ["DemoExamLogic", "AssessmentKit", "CarrelClientShim", "WaylandClientSupport", "CCairoLib",
                           "CXkbcommonLib"],
            swiftSettings: cSideSettings
        ),
        .testTarget(name: "AssessmentKitTests", dependencies: ["AssessmentKit", "DemoExamLogic", "CarrelTestSupport"]),
        // The compositor's Invigilator and AssessmentKit's in-memory lockdown, side by side.
        .testTarget(name: "LockdownAgreementTests", dependencies: ["CarrelCore", "AssessmentKit", "CarrelTestSupport"]),
    ] + browserTargets
)
