// swift-tools-version: 6.0
// Cask for Hummingbird apps: a PersistDriver backed by CaskCache. A package of its own, so that
// an app that uses only Cask never fetches or builds Hummingbird (see the Architecture article).
import PackageDescription

let package = Package(
    name: "CaskHummingbird",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18)],
    products: [
        .library(name: "CaskHummingbird", targets: ["CaskHummingbird"]),
    ],
    dependencies: [
        .package(name: "Cask", path: "../.."),
        .package(name: "CaskIntegrationTesting", path: "../CaskIntegrationTesting"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    ],
    targets: [
        .target(
            name: "CaskHummingbird",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "CaskHummingbirdTests",
            dependencies: [
                .product(name: "CaskIntegrationTesting", package: "CaskIntegrationTesting"),
                "CaskHummingbird",
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskTesting", package: "Cask"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
