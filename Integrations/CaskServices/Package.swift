// swift-tools-version: 6.0
// Cask in a server's lifecycle: CaskCache as a swift-service-lifecycle Service, and its statistics
// as swift-metrics. A package of its own, so that an app that uses only Cask fetches neither.
import PackageDescription

let package = Package(
    name: "CaskServices",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "CaskServices", targets: ["CaskServices"]),
    ],
    dependencies: [
        .package(name: "Cask", path: "../.."),
        .package(name: "CaskIntegrationTesting", path: "../CaskIntegrationTesting"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .target(
            name: "CaskServices",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "CaskServicesTests",
            dependencies: [
                .product(name: "CaskIntegrationTesting", package: "CaskIntegrationTesting"),
                "CaskServices",
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskTesting", package: "Cask"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
