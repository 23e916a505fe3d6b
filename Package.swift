// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Cask",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "Cask", targets: ["Cask"]),
        .library(name: "CaskTesting", targets: ["CaskTesting"]),
        .executable(name: "cask", targets: ["cask"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // `swift package generate-documentation --target Cask` (Sources/Cask/Cask.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // The system liblz4, found with pkg-config (Debian: liblz4-dev).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // Small C helpers: hardware CRC32C where the CPU has it.
        .target(name: "CCaskSupport"),
        .target(
            name: "Cask",
            dependencies: [
                "CLZ4", "CCaskSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "CaskTesting", dependencies: ["Cask"]),
        .executableTarget(
            name: "cask",
            dependencies: [
                "Cask",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Every ```swift example of README.md and Sources/Cask/Cask.docc, extracted by
        // tools/extract-examples.py; compiled by `swift test` (a dependency of CaskTests).
        .target(
            name: "DocumentationExamples",
            dependencies: ["Cask", "CaskTesting"],
            path: "Examples/DocumentationExamples"
        ),
        .testTarget(name: "CaskTests", dependencies: ["Cask", "CaskTesting", "DocumentationExamples"]),
    ],
    swiftLanguageModes: [.v6]
)
