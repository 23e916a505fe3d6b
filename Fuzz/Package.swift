// swift-tools-version: 6.0
// libFuzzer targets, kept out of the root package. Build one with:
//   swift build --package-path Fuzz -c release --product FuzzSegmentScanner \
//     --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz
// Run: tools/fuzz.sh [seconds per target]
import PackageDescription

let targets = ["FuzzRecordDecoder", "FuzzSegmentScanner", "FuzzHintParser", "FuzzLZ4", "FuzzOpen", "FuzzStoreFolder"]

let package = Package(
    name: "CaskFuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [.package(name: "Cask", path: "../")],
    targets: targets.map {
        .executableTarget(
            name: $0,
            dependencies: $0 == "FuzzOpen"
                ? [.product(name: "Cask", package: "Cask"), .product(name: "CaskTesting", package: "Cask")]
                : $0 == "FuzzStoreFolder"
                ? [.product(name: "Cask", package: "Cask"), .product(name: "CaskTesting", package: "Cask"), .product(name: "CaskFormat", package: "Cask")]
                : [.product(name: "CaskFormat", package: "Cask")],
            path: $0)
    }
)
