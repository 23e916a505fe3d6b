import Cask
import CaskServices
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
}
