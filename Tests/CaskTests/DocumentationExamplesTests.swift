import Foundation
import Testing

/// Every ```swift block of README.md and Sources/Cask/Cask.docc/*.md is compiled by tools/test.sh
/// through Examples/DocumentationExamples/Generated.swift, in the consumer package Examples/.
/// This suite checks that the checked-in file is what tools/extract-examples.py makes of the
/// documentation as it is now, so an edited example cannot skip the compiler.
@Suite struct DocumentationExamplesTests {
    static let root = repositoryRoot
    static let catalog = "Sources/Cask/Cask.docc"
    static let output = "Examples/DocumentationExamples/Generated.swift"

    @Test func generatedExamplesAreUpToDate() throws {
        let expected = try Self.generate()
        let current = try? String(contentsOf: Self.root.appendingPathComponent(Self.output), encoding: .utf8)
        guard current != expected else { return }
        let old = (current ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        let new = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let line = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
        Issue.record("examples changed: run python3 tools/extract-examples.py (\(Self.output) differs from line \(line + 1))")
    }

    @Test func everyArticleHasBeenSeen() throws {
        let articles = try Self.sources().filter { $0.hasPrefix(Self.catalog) }
        #expect(articles.contains("\(Self.catalog)/Cask.md"))
        #expect(articles.count >= 10)
    }

    // The same extraction as tools/extract-examples.py; keep the two in step.

    /// Articles whose examples use packages other than Cask's: the integration packages' tests
    /// compile them (their ReadmeExampleTests check that the article holds the same code).
    static let compiledElsewhere: Set<String> = ["ServerSwift.md", "ManyMachines.md"]

    /// Documentation files, relative to the repository root, in a fixed order.
    static func sources() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path)
            .filter { $0.hasSuffix(".md") && !compiledElsewhere.contains($0) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return ["README.md"] + names.map { "\(catalog)/\($0)" }
    }

    /// (first line number, lines) of every ```swift block; line numbers are 1-based.
    static func blocks(_ text: String) -> [(line: Int, body: [String])] {
        var found: [(line: Int, body: [String])] = []
        var current: [String]?
        var start = 0
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
        for (index, line) in lines.enumerated() {
            let fence = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if current == nil {
                if fence == "```swift" {
                    current = []
                    start = index + 2
                }
            } else if fence == "```" {
                found.append((start, current!))
                current = nil
            } else {
                var scalars = line.unicodeScalars[...]
                while let last = scalars.last, CharacterSet.whitespacesAndNewlines.contains(last) { scalars.removeLast() }
                current!.append(String(String.UnicodeScalarView(scalars)))
            }
        }
        return found
    }

    /// README.md -> README, Sources/Cask/Cask.docc/GettingStarted.md -> GettingStarted.
    static func identifier(_ path: String) -> String {
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return String(stem.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar)) ? Character(scalar) : "_"
        })
    }

    static func generate() throws -> String {
        var imports = Set<String>()
        var functions: [String] = []
        for path in try sources() {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            for (n, block) in blocks(text).enumerated() {
                var kept: [String] = []
                for code in block.body {
                    let trimmed = code.trimmingCharacters(in: .whitespacesAndNewlines)
                    if trimmed.hasPrefix("import ") { imports.insert(trimmed) } else { kept.append(code) }
                }
                while kept.first == "" { kept.removeFirst() }
                while kept.last == "" { kept.removeLast() }
                // Async only when the block awaits, as top-level code in a main.swift would be.
                let awaits = kept.contains { $0.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).contains("await") }
                var lines = ["// \(path), line \(block.line)", "func example_\(identifier(path))_\(n + 1)() \(awaits ? "async " : "")throws {"]
                lines += kept.map { $0.isEmpty ? "" : "    " + $0 }
                lines.append("}")
                functions.append(lines.joined(separator: "\n"))
            }
        }
        let header = [
            "// Generated by tools/extract-examples.py from README.md and Sources/Cask/Cask.docc/*.md.",
            "// Do not edit: change the examples there, then run `python3 tools/extract-examples.py`.",
            "// tools/test.sh compiles it in Examples/, a consumer package (public API only);",
            "// `swift test` checks that it is up to date.",
            "",
        ]
        let sortedImports = imports.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return (header + sortedImports).joined(separator: "\n") + "\n\n" + functions.joined(separator: "\n\n") + "\n"
    }
}
