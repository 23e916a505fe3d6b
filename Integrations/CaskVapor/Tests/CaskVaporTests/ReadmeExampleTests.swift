import Cask
import CaskVapor
import CaskIntegrationTesting
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
    let example = DocumentedExample()

    /// The Server Swift article of Cask's documentation shows the same example.
    @Test func theServerSwiftArticleHoldsTheExample() throws {
        #expect(try example.serverSwiftArticle().contains("```swift\n" + example.readmeBlock() + "```"))
    }

    @Test func theExampleIsTheReadmes() throws {
        #expect(try example.readmeCode() == example.compiledCode())
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
