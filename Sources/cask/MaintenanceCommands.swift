import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Compact a store now and report what was reclaimed.")

    @Argument(help: "The store directory.") var directory: String

    func run() throws {
        let store = try openStore(directory, for: .change) { $0.compaction.isAutomatic = false }
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        let before = store.fileBytes
        let report = try withStoreErrors { try store.compact() }
        let after = store.fileBytes
        try withStoreErrors { try store.close() }
        print("compacted \(report.segmentsCompacted) segments in \(String(format: "%.3f", report.seconds)) s: read \(Formatting.bytes(report.bytesRead)), wrote \(Formatting.bytes(report.bytesWritten)), \(report.recordsCopied) records kept, \(report.tombstonesDropped) tombstones dropped")
        print("disk use \(Formatting.bytes(before)) -> \(Formatting.bytes(after)) (reclaimed \(Formatting.bytes(before - after)))")
    }
}

struct Trim: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Evict items: least recently used down to a size or count, or those not accessed since a date.")

    @Argument(help: "The store directory.") var directory: String
    @Option(parsing: .unconditional, help: "Evict least recently used items until live records take at most this size (4096, 512KiB, 64MiB, 2GiB).") var size: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Remove items last accessed before this ISO 8601 date or date and time: \(ArgumentValues.dateForms).")) var date: String?
    @Option(parsing: .unconditional, help: "Evict least recently used items until at most this many remain.") var count: String?

    func validate() throws {
        if [size != nil, date != nil, count != nil].filter({ $0 }).count != 1 {
            throw ValidationError("give exactly one of --size, --date, --count")
        }
        if let size { _ = try ArgumentValues.bytes(size, option: "--size") }
        if let count { _ = try Self.count(count) }
        if let date { _ = try ArgumentValues.date(date, option: "--date") }
    }

    private static func count(_ text: String) throws -> Int {
        guard let n = Int(text) else { throw ValidationError("--count must be a whole number; got '\(text)'") }
        try ArgumentValues.count(n, option: "--count")
        return n
    }

    func run() throws {
        let store = try openStore(directory, for: .change) { $0.compaction.isAutomatic = false }
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        let before = store.count
        var after = before
        try withStoreErrors {
            if let size { try store.trim(toSize: try ArgumentValues.bytes(size, option: "--size")) }
            if let count { try store.trim(toCount: try Self.count(count)) }
            if let date { try store.trim(toDate: try ArgumentValues.date(date, option: "--date")) }
            after = store.count
            if after < before { try store.compact() }   // reclaims the space; nothing to reclaim otherwise
            try store.close()
        }
        print("removed \(before - after) items; \(after) remain")
    }
}

struct Pin: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pin a key (exempt from TTL and age limits, evicted last); exit 1 when missing.")
    @Argument(help: "The store directory.") var directory: String
    @OptionGroup var key: KeyArguments
    func run() throws { try setPinned(true, directory, try key.resolved()) }
}

struct Unpin: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unpin a key; exit 1 when missing.")
    @Argument(help: "The store directory.") var directory: String
    @OptionGroup var key: KeyArguments
    func run() throws { try setPinned(false, directory, try key.resolved()) }
}

private func setPinned(_ pinned: Bool, _ directory: String, _ key: String) throws {
    let store = try openStore(directory, for: .change)
    defer { try? store.close() }   // on every path: no store left to a background thread at exit
    let found = try withStoreErrors { try store.setPinned(pinned, forKey: key) }
    try withStoreErrors { try store.close() }
    if !found {
        printError("cask: no value for key \(ArgumentValues.escaped(key))")
        throw Exit.no
    }
}
