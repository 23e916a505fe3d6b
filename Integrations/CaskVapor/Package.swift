// swift-tools-version: 6.0
// Cask for Vapor apps: `app.caches.use(.cask(cache))`. A package of its own, so that an app that
// uses only Cask never fetches or builds Vapor (see the Architecture article).
import PackageDescription

let package = Package(
    name: "CaskVapor",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CaskVapor", targets: ["CaskVapor"]),
    ],
    dependencies: [
        .package(name: "Cask", path: "../.."),
        .package(name: "CaskIntegrationTesting", path: "../CaskIntegrationTesting"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .target(
            name: "CaskVapor",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "Vapor", package: "vapor"),
            ]
        ),
        .testTarget(
            name: "CaskVaporTests",
            dependencies: [
                .product(name: "CaskIntegrationTesting", package: "CaskIntegrationTesting"),
                "CaskVapor",
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskTesting", package: "Cask"),
                .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
