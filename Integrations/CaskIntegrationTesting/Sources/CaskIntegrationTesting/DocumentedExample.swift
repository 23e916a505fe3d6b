import Foundation

/// The example a package documents, and the code its tests compile, read for comparison.
///
/// A package's README.md has one ```swift block. A test file holds the same code, without its
/// imports, between the lines `// README example begins` and `// README example ends`. Cask's
/// Server Swift article holds the README's block verbatim.
public struct DocumentedExample {
    /// The package's folder (holding README.md), found from a test file's `#filePath`
    /// (`Tests/<target>/<file>.swift`).
    public let packageRoot: URL

    public init(testFile: String = #filePath) {
        packageRoot = URL(fileURLWithPath: testFile).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The README's ```swift block, as written (imports included).
    public func readmeBlock() throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let block = readme.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first else {
            throw Missing(what: "a ```swift block in \(packageRoot.path)/README.md")
        }
        return block
    }

    /// The README's block without its import lines, trimmed.
    public func readmeCode() throws -> String {
        try readmeBlock().split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("import ") }
            .joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The code between the markers in `testFile`, trimmed.
    public func compiledCode(in testFile: String = #filePath) throws -> String {
        let source = try String(contentsOf: URL(fileURLWithPath: testFile), encoding: .utf8)
        guard let code = source.components(separatedBy: "// README example begins\n").dropFirst().first?
            .components(separatedBy: "// README example ends").first else {
            throw Missing(what: "the README example markers in \(testFile)")
        }
        return code.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Cask's Server Swift article (Sources/Cask/Cask.docc/ServerSwift.md).
    public func serverSwiftArticle() throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent("../../Sources/Cask/Cask.docc/ServerSwift.md"), encoding: .utf8)
    }

    /// Something the comparison needs is not where it should be.
    public struct Missing: Error, CustomStringConvertible {
        public let what: String
        public var description: String { "missing: \(what)" }
    }
}
