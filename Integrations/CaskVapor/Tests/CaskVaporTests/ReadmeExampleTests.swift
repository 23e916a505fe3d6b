import Cask
import CaskVapor
import Foundation
import Testing
import VaporTesting

// The example of README.md, compiled here: the text between the markers must be the README's
// ```swift block, line for line (checked below).
// README example begins
func configure(_ app: Application) throws {
    app.caches.use(.cask(try CaskCache(directory: app.directory.workingDirectory + "cache")))
    app.get("greeting") { req async throws -> String in
        if let cached = try await req.cache.get("greeting", as: String.self) { return cached }
        try await req.cache.set("greeting", to: "hello", expiresIn: .minutes(10))
        return "hello"
    }
}
// README example ends

@Suite struct ReadmeExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Server Swift article of Cask's documentation shows the same example.
    @Test func theServerSwiftArticleHoldsTheExample() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        let article = try String(contentsOf: Self.packageRoot.appendingPathComponent("../../Sources/Cask/Cask.docc/ServerSwift.md"), encoding: .utf8)
        #expect(article.contains("```swift\n" + block + "```"))
    }

    @Test func theExampleIsTheReadmes() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let compiled = try #require(source.components(separatedBy: "// README example begins\n").dropFirst().first?
            .components(separatedBy: "// README example ends").first)
        let readmeCode = block.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("import ") }
            .joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(readmeCode == compiled.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The example runs: the second request is answered from the cache, across a restart too.
    @Test func theExampleAnswersFromTheCacheAcrossARestart() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        for _ in 0..<2 {
            try await withApp(configure: { app in
                app.directory.workingDirectory = folder.path + "/"
                try configure(app)
            }) { app in
                try await app.testing().test(.GET, "greeting") { #expect($0.body.string == "hello") }
                #expect(try await app.cache.get("greeting", as: String.self) == "hello")
            }
        }
    }
}
