import Cask
import Foundation
import Testing

/// What an app that imports both Foundation and Cask sees (issue 13): no name clashes, errors
/// that describe themselves, one eviction cause for both layers. Plain `import Cask`, as an app.
@Suite struct PublicAPITests {
    @Test func foundationNamesStayUnambiguous() {
        // `FileHandle` is Foundation's; Cask's handle is `CaskFileHandle`. This line is the claim:
        // it does not compile when Cask declares a public `FileHandle`.
        let h: FileHandle? = nil
        let mine: CaskFileHandle? = CaskFileHandle(rawValue: 3)
        #expect(h == nil && mine?.rawValue == 3)
    }

    @Test func errorsDescribeThemselvesThroughLocalizedError() throws {
        let dir = TemporaryDirectory()
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: dir.file("notes.txt")))
        do {
            _ = try DiskStore(directory: dir.path)
            Issue.record("a foreign folder opened as a store")
        } catch {
            let text = (error as any Error).localizedDescription
            #expect(text == error.description)
            #expect(text.contains(dir.file("notes.txt")), "\(text)")
            #expect(!text.contains("The operation could not be completed"))
        }
    }

    @Test func bothLayersReportTheSameEvictionCause() throws {
        let causes = Causes()
        let memory = MemoryCache<Int>(limits: .init(countLimit: 1)) { _, _, cause in causes.append(cause) }
        memory.setValue(1, forKey: "a")
        memory.setValue(2, forKey: "b")
        let dir = TemporaryDirectory()
        var options = StoreOptions()
        options.limits.countLimit = 1
        options.eventHandler = { if case .evicted(_, let cause) = $0 { causes.append(cause) } }
        let store = try DiskStore(directory: dir.path, options: options)
        try store.setValue(Data([1]), forKey: "a")
        try store.setValue(Data([2]), forKey: "b")
        try store.close()
        #expect(causes.all == [.count, .count])
    }

    @Test func memoryCacheTakesAnyKeyTheEmptyOneIncluded() {
        let memory = MemoryCache<Int>()
        #expect(memory.setValue(7, forKey: ""))
        #expect(memory.value(forKey: "") == 7 && memory.count == 1)
    }

    @Test func asyncFacadeThrowsCaskError() async throws {
        let dir = TemporaryDirectory()
        let cache = try CaskCache(directory: dir.path)
        defer { try? cache.close() }
        do {
            try await cache.setData(Data(), forKey: "")
            Issue.record("an empty key was accepted")
        } catch {
            // The thrown type is CaskError itself (typed throws), no cast needed.
            #expect(error == .emptyKey)
        }
    }
}

/// Eviction causes collected from any thread.
private final class Causes: @unchecked Sendable {
    private let lock = NSLock()
    private var causes: [EvictionCause] = []
    func append(_ cause: EvictionCause) { lock.withLock { causes.append(cause) } }
    var all: [EvictionCause] { lock.withLock { causes } }
}
