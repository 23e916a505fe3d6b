// swift-tools-version: 6.0
// Cask's shared tier on Redis (or Valkey): `RedisSharedTier`, a `SharedTier` that keeps every
// node's local copies coherent, over a small RESP3 client on swift-nio. A package of its own,
// so that an app that uses only Cask builds no networking.
import PackageDescription

let package = Package(
    name: "CaskRedis",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18)],
    products: [
        .library(name: "CaskRedis", targets: ["CaskRedis"]),
        .executable(name: "cask-redis-node", targets: ["cask-redis-node"]),
        .executable(name: "cask-redis-bench", targets: ["cask-redis-bench"]),
    ],
    dependencies: [
        .package(name: "Cask", path: "../.."),
        .package(name: "CaskIntegrationTesting", path: "../CaskIntegrationTesting"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    ],
    targets: [
        .target(
            name: "CaskRedis",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // One node of a test cluster, driven over stdin/stdout by the multi-process tests.
        .executableTarget(
            name: "cask-redis-node",
            dependencies: ["CaskRedis", .product(name: "Cask", package: "Cask")]
        ),
        // The benchmark (tools/bench-shared-tier.sh): gets from each tier, the invalidation delay.
        .executableTarget(
            name: "cask-redis-bench",
            dependencies: ["CaskRedis", .product(name: "Cask", package: "Cask")]
        ),
        .testTarget(
            name: "CaskRedisTests",
            dependencies: [
                .product(name: "CaskIntegrationTesting", package: "CaskIntegrationTesting"),
                "CaskRedis",
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskTesting", package: "Cask"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
