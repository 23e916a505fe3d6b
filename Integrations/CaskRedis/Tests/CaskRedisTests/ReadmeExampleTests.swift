import Cask
import CaskIntegrationTesting
import CaskRedis
import Foundation
import Testing

// The example of README.md, compiled here: the text between the markers must be the README's
// ```swift block, line for line (checked below).
// README example begins
func openCache(folder: String, redisHost: String) throws -> (CaskCache, RedisSharedTier) {
    let redis = RedisSharedTier(RedisConfiguration(host: redisHost, port: 6379))
    var options = CacheOptions()
    options.sharedTier = redis                    // the one line that makes the instances one cache
    options.sharedTierTimeout = .milliseconds(50) // the longest a read waits for Redis
    return (try CaskCache(directory: folder, options: options), redis)
}
// README example ends

@Suite struct ReadmeExampleTests {
    let example = DocumentedExample()

    @Test func theExampleIsTheReadmes() throws {
        #expect(try example.readmeCode() == example.compiledCode())
    }

    /// The Many Machines article of Cask's documentation shows the same example.
    @Test func theManyMachinesArticleHoldsTheExample() throws {
        let article = try String(contentsOf: example.packageRoot.appendingPathComponent("../../Sources/Cask/Cask.docc/ManyMachines.md"), encoding: .utf8)
        #expect(article.contains("```swift\n" + (try example.readmeBlock()) + "```"))
    }
}
