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
    ],
    targets: [
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
