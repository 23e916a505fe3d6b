// swift-tools-version: 6.0
import PackageDescription

/// Where Cask seals with swift-crypto (CryptoKit). Elsewhere (Linux) it seals with the system
/// libcrypto (`CLibCrypto`), so that an app's build compiles no BoringSSL that Cask never calls.
let applePlatforms: [Platform] = [.macOS, .iOS, .tvOS, .watchOS, .visionOS]
/// swift-crypto's `Crypto`, for the targets that need it, on Apple platforms only.
let swiftCrypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: applePlatforms))

let package = Package(
    name: "Cask",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "Cask", targets: ["Cask"]),
        .library(name: "CaskTesting", targets: ["CaskTesting"]),
        // The on-disk format alone (codecs, CRC32C, LZ4, scanner, hint parser), for the fuzzers
        // and tools; its API is `package` access and the `Fuzzing` SPI.
        .library(name: "CaskFormat", targets: ["CaskFormat"]),
        .executable(name: "cask", targets: ["cask"]),
        // The benchmarks' physical-limit baseline (a buffered append log); not part of Cask.
        .library(name: "CaskBaselines", targets: ["CaskBaselines"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // `swift package generate-documentation --target Cask` (Sources/Cask/Cask.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // AES-256-GCM, HMAC-SHA256 and SHA-256 for encryption at rest (`StoreOptions.encryption`)
        // on Apple platforms (CryptoKit); never built on Linux (`swiftCrypto`, `CLibCrypto`).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
    ],
    targets: [
        // The system liblz4, found with pkg-config (Debian: liblz4-dev).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // AES-256-GCM, HMAC-SHA256 and SHA-256 from the system libcrypto (Debian: libssl-dev),
        // on Linux only: a context keeps its key schedule across records (swift-crypto sets the
        // key up for each one), and no BoringSSL is built. Apple platforms use swift-crypto.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Small C helpers: hardware CRC32C where the CPU has it.
        .target(name: "CCaskSupport"),
        // Support code every layer may use and that knows nothing of a store: the mutex wrapper,
        // the group commit's leader gate, the background thread, the wall clock (public:
        // `WallClock`), crash points for the kill tests. Imports only the C shims.
        .target(name: "CaskSupport", dependencies: ["CCaskSupport"]),
        // The memory layer: `MemoryCache` (public) and its shards, LRU lists and read stripes,
        // and `EvictionCause` (public), which both layers report. Imports only `CaskSupport`
        // and the C shims; `Cask` re-exports it (Sources/Cask/Exports.swift).
        .target(name: "CaskMemory", dependencies: ["CaskSupport", "CCaskSupport"]),
        // The on-disk format: depends on nothing above the C shims.
        .target(name: "CaskFormat", dependencies: ["CLZ4", "CCaskSupport"]),
        .target(
            name: "Cask",
            dependencies: [
                "CaskFormat", "CaskMemory", "CaskSupport", "CCaskSupport",
                .product(name: "Logging", package: "swift-log"),
                swiftCrypto,
                .target(name: "CLibCrypto", condition: .when(platforms: [.linux])),
            ]
        ),
        .target(name: "CaskTesting", dependencies: ["Cask", "CaskFormat", "CaskSupport"]),
        // What the command-line tools share: output formatting, progress, exit statuses.
        .target(
            name: "CaskToolSupport",
            dependencies: [
                "Cask", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "cask",
            dependencies: [
                "Cask", "CaskFormat", "CaskToolSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The fastest simple implementation of Cask's write path, for same-run benchmark ratios
        // (`cask-harness bench`, `Benchmarks/Peers`).
        .target(name: "CaskBaselines"),
        // Crash, disk-full and exit harnesses and whole-store benchmarks: driven by the tests,
        // not shipped with `cask`.
        .executableTarget(
            name: "cask-harness",
            dependencies: [
                "Cask", "CaskFormat", "CaskToolSupport", "CaskBaselines",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "CaskTests", dependencies: [
            "Cask", "CaskFormat", "CaskMemory", "CaskSupport", "CaskTesting", "CaskToolSupport", swiftCrypto,
        ], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
