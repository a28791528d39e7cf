// swift-tools-version: 6.1
import PackageDescription

// wlroots' C API is imported through CarrelShim; the system-library targets
// below only contribute pkg-config flags and link lines.
let linkOnly: [Target] = [
    .systemLibrary(name: "CWlrootsLib", path: "CModules/CWlrootsLib", pkgConfig: "wlroots",
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
    // The exception: its header includes <cairo.h>, which the demo exam calls.
    .systemLibrary(name: "CCairoLib", path: "CModules/CCairoLib", pkgConfig: "cairo",
                   providers: [.apt(["libcairo2-dev"])]),
]

// Swift 5 mode for the targets that hold C pointers: they live on the one
// Wayland event-loop thread, which strict Sendable checking cannot see.
let cSideSettings: [SwiftSetting] = [.swiftLanguageMode(.v5)]

let package = Package(
    name: "Carrel",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "carrel", targets: ["carrel"]),
        .library(name: "CarrelCore", targets: ["CarrelCore"]),
        .library(name: "AssessmentKit", targets: ["AssessmentKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
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
            sources: ["shim.c"],
            publicHeadersPath: "include"
        ),
        // The media restriction provider's sd-bus calls (MPRIS pause).
        .target(
            name: "CarrelMedia",
            dependencies: ["CSystemdLib"],
            path: "CModules/CarrelMedia",
            sources: ["media.c"],
            publicHeadersPath: "include"
        ),
        .target(
            name: "CarrelClientShim",
            dependencies: ["CarrelProtocolCode", "CWaylandClientLib"],
            path: "CModules/CarrelClientShim",
            sources: ["shm.c"],
            publicHeadersPath: "include"
        ),
        .target(name: "CarrelCore"),
        .target(
            name: "CarrelCompositor",
            dependencies: ["CarrelCore", "CarrelShim", "CarrelMedia", .product(name: "Logging", package: "swift-log")],
            swiftSettings: cSideSettings
        ),
        .executableTarget(
            name: "carrel",
            dependencies: [
                "CarrelCompositor", "CarrelCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: cSideSettings
        ),
        // A small Wayland client for tests and benchmarks: paints a solid colour
        // or animates, and timestamps its milestones with CLOCK_MONOTONIC.
        .executableTarget(
            name: "carrel-paint",
            dependencies: ["CarrelClientShim"],
            path: "Sources/carrel-paint",
            swiftSettings: cSideSettings
        ),
        // Red-team client (issue 4): tries each attack and prints a JSON verdict.
        .executableTarget(name: "carrel-probe", dependencies: ["CarrelClientShim"], swiftSettings: cSideSettings),
        .testTarget(name: "CarrelCoreTests", dependencies: ["CarrelCore"]),
        // The client library for exam apps, the demo exam's pure logic, and the demo.
        .target(name: "AssessmentKit", dependencies: ["CarrelClientShim"], swiftSettings: cSideSettings),
        .target(name: "DemoExamLogic", dependencies: ["AssessmentKit"]),
        .executableTarget(
            name: "carrel-demo-exam",
            dependencies: ["DemoExamLogic", "AssessmentKit", "CarrelClientShim", "CCairoLib"],
            swiftSettings: cSideSettings
        ),
        .testTarget(name: "AssessmentKitTests", dependencies: ["AssessmentKit", "DemoExamLogic"]),
    ]
)
