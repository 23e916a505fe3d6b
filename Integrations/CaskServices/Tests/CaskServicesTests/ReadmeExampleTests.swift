import Cask
import CaskServices
import CaskIntegrationTesting
import Foundation
import Logging
import MetricsTestKit
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

    /// The article's metric table names exactly the metrics `CaskMetrics` creates: each name,
    /// kind and dimension value, and no other.
    @Test func theArticleNamesEveryMetricAndNoOther() throws {
        let article = try example.serverSwiftArticle()
        let documented = Set(try DocumentedMetric.rows(of: article).flatMap(\.expanded))
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let factory = TestMetrics()
        let cache = try CaskCache(directory: folder.path)
        let metrics = CaskMetrics(cache: cache, factory: factory)
        metrics.report()
        func described(_ kind: String, _ label: String, _ dimensions: [(String, String)]) -> String {
            "\(kind) \(label)" + dimensions.map { " \($0.0)=\($0.1)" }.joined()
        }
        let created = Set(factory.counters.map { described("counter", $0.label, $0.dimensions) }
                          + factory.meters.map { described("gauge", $0.label, $0.dimensions) }
                          + factory.recorders.map { described("gauge", $0.label, $0.dimensions) }
                          + factory.timers.map { described("timer", $0.label, $0.dimensions) })
        #expect(documented.count > 20)
        #expect(created.subtracting(documented).sorted() == [], "created but not in the article")
        #expect(documented.subtracting(created).sorted() == [], "in the article but not created")
        try cache.close()
    }
}

/// One row of the article's metric table: `| names | kind | dimension |`.
struct DocumentedMetric {
    var names: [String]
    var kind: String
    var dimension: (name: String, values: [String])?

    /// Each metric the row stands for, as `kind label name=value`.
    var expanded: [String] {
        names.flatMap { name in
            guard let dimension else { return ["\(kind) \(name)"] }
            return dimension.values.map { "\(kind) \(name) \(dimension.name)=\($0)" }
        }
    }

    /// The rows of the first table headed `| metric | kind | dimensions |` in `article`.
    static func rows(of article: String) throws -> [DocumentedMetric] {
        let lines = article.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let header = lines.firstIndex(of: "| metric | kind | dimensions |") else {
            struct NoTable: Error {}
            throw NoTable()
        }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let kind = ["counter", "gauge", "timer"].first { cells[2].hasPrefix($0) } ?? cells[2]
            let dimension = quoted(cells[3])
            return DocumentedMetric(names: quoted(cells[1]), kind: kind,
                                    dimension: dimension.isEmpty ? nil : (dimension[0], Array(dimension.dropFirst())))
        }
    }

    /// The `backquoted` words of a cell, in order.
    static func quoted(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}
