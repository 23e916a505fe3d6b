import Foundation
import Testing

/// The Architecture article's map of where the store's lock is taken ("Where the store's lock is
/// taken") against the sources: a new place, or one gone, fails here until the map says so.
@Suite struct ArchitectureTests {
    /// Places per file, counted in `Sources/Cask/Disk` and `Sources/Cask/Log`: a call of
    /// `state.withLock`, `state.withSlice`, `state.forEachInSlices` or `state.walkIndexBackwards`
    /// (the store's lock is the `state` of `DiskStore` and `Compactor`), and, in the files that
    /// extend `StoreStateLock`, a bare `withLock` or `withSlice` call. Comments and the
    /// declarations themselves do not count.
    static func placesInSources() throws -> [String: Int] {
        let onState = try NSRegularExpression(pattern: #"\bstate\.(withLock|withSlice|forEachInSlices|walkIndexBackwards)\b"#)
        let bare = try NSRegularExpression(pattern: #"(?<![\w.])(withLock|withSlice)\s*[({]"#)
        let declaration = try NSRegularExpression(pattern: #"\bfunc (withLock|withSlice|forEachInSlices|walkIndexBackwards)\b"#)
        var places: [String: Int] = [:]
        for folder in ["Sources/Cask/Disk", "Sources/Cask/Log"] {
            let url = repositoryRoot.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name.hasSuffix(".swift") {
                let text = try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
                let extendsLock = text.contains("extension StoreStateLock")
                for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                    let l = String(line)
                    let trimmed = l.trimmingCharacters(in: .whitespaces)
                    if trimmed.hasPrefix("//") || matches(declaration, l) { continue }
                    if matches(onState, l) || (extendsLock && matches(bare, l)) { places[name, default: 0] += 1 }
                }
            }
        }
        return places
    }

    static func matches(_ pattern: NSRegularExpression, _ line: String) -> Bool {
        pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
    }

    /// The article's table: file name to places.
    static func placesInArticle() throws -> [String: Int] {
        let url = repositoryRoot.appendingPathComponent("Sources/Cask/Cask.docc/Architecture.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let start = text.range(of: "### Where the store's lock is taken") else { return [:] }
        var places: [String: Int] = [:]
        for line in text[start.upperBound...].split(separator: "\n") {
            if line.hasPrefix("#") { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[0].hasPrefix("`"), cells[0].hasSuffix(".swift`"), let n = Int(cells[1]) else { continue }
            places[String(cells[0].dropFirst().dropLast())] = n
        }
        return places
    }

    @Test func theArticleListsEveryPlaceTheStoreLockIsTaken() throws {
        let sources = try Self.placesInSources()
        let article = try Self.placesInArticle()
        #expect(!article.isEmpty, "Architecture.md has no table of the store lock's places")
        #expect(sources == article, "sources \(sources.sorted { $0.key < $1.key }) vs article \(article.sorted { $0.key < $1.key })")
    }
}
