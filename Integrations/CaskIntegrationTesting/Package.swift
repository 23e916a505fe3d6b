// swift-tools-version: 6.0
// What the integration packages' tests share: a temporary folder per test, the examples of a
// package's README.md and of Cask's Server Swift article, read for comparison with compiled code,
// a redis-server of their own, and the nodes of a test cluster on a shared tier.
import PackageDescription

let package = Package(
    name: "CaskIntegrationTesting",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [.library(name: "CaskIntegrationTesting", targets: ["CaskIntegrationTesting"])],
    dependencies: [.package(name: "Cask", path: "../..")],
    targets: [.target(name: "CaskIntegrationTesting", dependencies: [.product(name: "Cask", package: "Cask")])],
    swiftLanguageModes: [.v6]
)
