// swift-tools-version: 6.1
// The benchmark suite (ordo-one/package-benchmark), kept out of the root package so that the
// tests never build it. Run: swift package --package-path Benchmarks benchmark
import PackageDescription

let package = Package(
    name: "CaskBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Cask", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        // The peers, through their C APIs, from the Debian -dev packages (tools/install-peers.sh).
        .systemLibrary(name: "CSQLite", path: "Peers/CSQLite"),
        .systemLibrary(name: "CLMDB", path: "Peers/CLMDB"),
        .systemLibrary(name: "CLevelDB", path: "Peers/CLevelDB"),
        .systemLibrary(name: "CRocksDB", path: "Peers/CRocksDB"),
        .systemLibrary(name: "CPeerLZ4", path: "Peers/CPeerLZ4"),
        // One `Engine` protocol with an adapter per store; workloads run against it.
        .target(
            name: "PeerEngines",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskBaselines", package: "Cask"),
                "CSQLite", "CLMDB", "CLevelDB", "CRocksDB",
            ],
            path: "Peers/PeerEngines"
        ),
        // `cask-versus`: the side-by-side report (one child process per engine).
        .executableTarget(
            name: "cask-versus",
            dependencies: [
                "PeerEngines", "CPeerLZ4",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Peers/Versus"
        ),
        .executableTarget(
            name: "PeerBenchmarks",
            dependencies: [
                "PeerEngines",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "PeerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // `memory-versus`: MemoryCache against a bare Dictionary and a locked Dictionary LRU.
        .executableTarget(
            name: "memory-versus",
            dependencies: [.product(name: "Cask", package: "Cask")],
            path: "MemoryVersus"
        ),
        .executableTarget(
            name: "DiskStoreBenchmarks",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "DiskStoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "CacheBenchmarks",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "CacheBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
