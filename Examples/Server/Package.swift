// swift-tools-version: 6.2
// A small Hummingbird service that uses Cask the way a server does: a slow upstream served
// through get-or-load (one load per key, stale values when the upstream fails), sessions through
// the persist driver, and /metrics through swift-prometheus. Start it with
//   swift run --package-path Examples/Server cask-example-server
import PackageDescription

let package = Package(
    name: "CaskExampleServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Cask", path: "../.."),
        .package(name: "CaskIntegrationTesting", path: "../../Integrations/CaskIntegrationTesting"),
        .package(name: "CaskHummingbird", path: "../../Integrations/CaskHummingbird"),
        .package(name: "CaskServices", path: "../../Integrations/CaskServices"),
        .package(name: "CaskRedis", path: "../../Integrations/CaskRedis"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
    ],
    targets: [
        .target(
            name: "ExampleServer",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskHummingbird", package: "CaskHummingbird"),
                .product(name: "CaskServices", package: "CaskServices"),
                .product(name: "CaskRedis", package: "CaskRedis"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .executableTarget(
            name: "cask-example-server",
            dependencies: ["ExampleServer", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "CaskRedis", package: "CaskRedis")]
        ),
        .testTarget(
            name: "ExampleServerTests",
            dependencies: [
                .product(name: "CaskIntegrationTesting", package: "CaskIntegrationTesting"),
                "ExampleServer",
                .product(name: "CaskRedis", package: "CaskRedis"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
