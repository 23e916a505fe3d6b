import Cask
import CaskServices
import CaskIntegrationTesting
import Foundation
import Logging
import ServiceLifecycle
import Testing

// The example of README.md, compiled here: the text between the markers must be the README's
// ```swift block, line for line (checked below).
// README example begins
func runCache(folder: String, beside services: [any Service]) async throws {
    let cache = try CaskCache(directory: folder)
    let metrics = CaskMetrics(cache: cache, dimensions: [("cache", "users")])   // the bootstrapped MetricsSystem
    let service = CaskCacheService(cache: cache, metrics: metrics, metricsInterval: .seconds(10))
    let group = ServiceGroup(services: services + [service], gracefulShutdownSignals: [.sigterm],
                             logger: Logger(label: "app"))
    try await group.run()   // on SIGTERM: the cache reports its metrics once more and closes
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
}
