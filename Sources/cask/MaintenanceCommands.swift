import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Compact a store now and report what was reclaimed.")

    @Argument(help: "The store directory.") var directory: String

    func run() throws {
        let store = try openStore(directory, for: .change) { $0.compaction.isAutomatic = false }
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
    @Option(help: "Evict least recently used items until live records take at most this many bytes.") var size: Int?
    @Option(help: "Remove items last accessed before this ISO 8601 date (e.g. 2026-11-01T00:00:00Z).") var date: String?
    @Option(help: "Evict least recently used items until at most this many remain.") var count: Int?

    func validate() throws {
        if [size != nil, date != nil, count != nil].filter({ $0 }).count != 1 {
            throw ValidationError("give exactly one of --size, --date, --count")
        }
        if let date, ISO8601DateFormatter().date(from: date) == nil {
            throw ValidationError("--date must be ISO 8601, like 2026-11-01T00:00:00Z")
        }
    }

    func run() throws {
        let store = try openStore(directory, for: .change) { $0.compaction.isAutomatic = false }
        let before = store.count
        try withStoreErrors {
            if let size { try store.trim(toSize: size) }
            if let count { try store.trim(toCount: count) }
            if let date { try store.trim(toDate: ISO8601DateFormatter().date(from: date)!) }
            try store.compact()
            try store.close()
        }
        print("removed \(before - store.count) items; \(store.count) remain")
    }
}

struct Pin: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Pin a key (exempt from TTL and age limits, evicted last); exit 1 when missing.")
    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The key.") var key: String
    func run() throws { try setPinned(true, directory, key) }
}

struct Unpin: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unpin a key; exit 1 when missing.")
    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The key.") var key: String
    func run() throws { try setPinned(false, directory, key) }
}

private func setPinned(_ pinned: Bool, _ directory: String, _ key: String) throws {
    let store = try openStore(directory, for: .change)
    let found = try withStoreErrors { try store.setPinned(pinned, forKey: key) }
    try withStoreErrors { try store.close() }
    if !found {
        printError("cask: no value for key \(key)")
        throw Exit.no
    }
}
