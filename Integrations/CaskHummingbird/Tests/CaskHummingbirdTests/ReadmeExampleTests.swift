import CaskHummingbird
import CaskIntegrationTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

// The example of README.md, compiled here: the text between the markers must be the README's
// ```swift block, line for line (checked below).
// README example begins
func buildApplication(folder: String) throws -> some ApplicationProtocol {
    let persist = try CaskPersistDriver(directory: folder)   // was: MemoryPersistDriver()
    let router = Router()
    router.put("/visits/:user") { _, context -> String in
        let user = try context.parameters.require("user")
        let visits = (try await persist.get(key: "visits:\(user)", as: Int.self) ?? 0) + 1
        try await persist.set(key: "visits:\(user)", value: visits, expires: .seconds(86_400))
        return "\(visits)"
    }
    // As a service, the driver closes the store on graceful shutdown (sync + index snapshot).
    return Application(router: router, services: [persist])
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

    /// The example runs: a visit counter that survives a restart of the app.
    @Test func theExampleCountsVisitsAcrossARestart() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        for expected in ["1", "2"] {
            try await buildApplication(folder: folder.path).test(.ahc(.http)) { client in
                try await client.execute(uri: "/visits/ada", method: .put) { #expect(String(buffer: $0.body) == expected) }
            }
        }
    }
}
