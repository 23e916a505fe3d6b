// swift-tools-version: 6.0
// A consumer of Cask, as an app is: a separate package that depends on it and sees only its
// public API. It compiles every ```swift example of README.md and Sources/Cask/Cask.docc
// (Generated.swift, written by tools/extract-examples.py). tools/test.sh builds it:
//   swift build --package-path Examples
import PackageDescription

let package = Package(
    name: "CaskExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Cask", path: "../"),
    ],
    targets: [
        .target(
            name: "DocumentationExamples",
            dependencies: [
                .product(name: "Cask", package: "Cask"),
                .product(name: "CaskTesting", package: "Cask"),
            ],
            path: "DocumentationExamples"
        ),
    ],
    swiftLanguageModes: [.v6]
)
