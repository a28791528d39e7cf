// swift-tools-version: 6.3
// Micro-benchmarks for Carrel's hot pure paths (ordo-one/benchmark). A package
// of its own so that the main build and CI's test build never compile it; it
// needs Swift 6.3 because the benchmark package does. Run with `bench/micro`
// from the repository root (or `swift package --disable-sandbox benchmark`
// here).
import PackageDescription

let package = Package(
    name: "CarrelBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Carrel", path: ".."),
        // The malloc interposer counts allocations per call; the runtime
        // interposer (ARC counting) is left off.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CarrelCore", package: "Carrel"),
                .product(name: "CarrelAudit", package: "Carrel"),
            ],
            path: "Benchmarks/CoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
