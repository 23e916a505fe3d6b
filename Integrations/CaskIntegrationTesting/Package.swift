// swift-tools-version: 6.0
// What the integration packages' tests share: a temporary folder per test, and the examples of a
// package's README.md and of Cask's Server Swift article, read for comparison with compiled code.
import PackageDescription

let package = Package(
    name: "CaskIntegrationTesting",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [.library(name: "CaskIntegrationTesting", targets: ["CaskIntegrationTesting"])],
    targets: [.target(name: "CaskIntegrationTesting")],
    swiftLanguageModes: [.v6]
)
