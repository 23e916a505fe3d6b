import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness cache-step DIR OP KEY`: one operation through the two-level ``CaskCache``
/// (memory in front of disk), then, in the same process, a read of the key back through the
/// cache, checked against what the operation was acknowledged to do. For the outside-in fault
/// suite (`tools/fault_suite.py --engine cache`), which runs each step under `fiu-run` and
/// keeps the model of acknowledged operations.
///
/// Exit status, the only channel a faulted process has that no failed `write` can lose:
/// 0 the operation was acknowledged and the read-back agreed; 1 the answer is no (`rm`, `pin`,
/// `unpin` of a missing key, as `cask` exits; `rmtag` that removed nothing); 2 a defect seen
/// from inside (the read-back
/// disagreed with the acknowledged operation, say the memory layer kept a copy its record no
/// longer backs, or `get` found none of the `--allowed` values); 3 the operation failed with a
/// typed error (it may or may not have taken effect).
struct CacheStep: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cache-step", abstract: "One CaskCache operation and its read-back (for the fault suite).", shouldDisplay: false)

    /// `rmtag`: ``CaskCache/removeValues(taggedWith:)`` of KEY (a tag).
    enum Operation: String, ExpressibleByArgument, CaseIterable { case put, rm, get, pin, unpin, compact, rmtag }

    @Argument var directory: String
    @Argument var operation: Operation
    @Argument var key: String = "k"
    @Option(help: "put: the value is this text repeated --repeat times.") var value = ""
    @Option var `repeat` = 1
    @Option(help: "put: read the value from this file instead.") var file: String?
    @Flag(help: "put: pin the item.") var pin = false
    @Option(help: "put: store a cache entry listing this tag (fresh for a day), instead of a plain value.") var tag: String?
    @Option(help: "get: the FNV-1a 64 hashes (hex) of the values the key may hold; 'absent' allows none.") var allowed: [String] = []

    func run() throws {
        var options = CacheOptions()
        options.disk.encryption = try toolEncryption()   // CASK_KEY_FILE, as for `cask`
        options.disk.durability = .none
        options.disk.compaction.isAutomatic = false
        options.disk.logger.logLevel = .critical
        let cache: CaskCache
        do { cache = try CaskCache(directory: directory, options: options) } catch { throw ExitCode(3) }
        let status = perform(on: cache)
        do { try cache.close() } catch { throw ExitCode(status == 0 ? 3 : status) }
        if status != 0 { throw ExitCode(status) }
    }

    /// The operation and its read-back; the exit status.
    private func perform(on cache: CaskCache) -> Int32 {
        do {
            switch operation {
            case .put:
                let data = try file.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
                    ?? Data(String(repeating: value, count: max(1, `repeat`)).utf8)
                if let tag {
                    let far = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
                    _ = try data.withUnsafeBytes { raw throws(CaskError) in
                        try cache.disk.putEntry(raw, forKey: key, freshUntil: far, expiry: far, tags: [tag])
                    }
                } else {
                    try cache.setData(data, forKey: key, isPinned: pin)
                }
                return readBack(cache) { $0 == data }
            case .rmtag:
                return try cache.removeValues(taggedWith: key) == 0 ? 1 : 0
            case .rm:
                let removed = try cache.removeValue(forKey: key)
                let status = readBack(cache) { $0 == nil }
                return status == 0 && !removed ? 1 : status
            case .pin, .unpin:
                let before = try cache.data(forKey: key)
                let found = try cache.setPinned(operation == .pin, forKey: key)
                let status = readBack(cache) { $0 == before }
                return status == 0 && !found ? 1 : status
            case .compact:
                _ = try cache.disk.compact()
                return 0
            case .get:
                let found = try cache.data(forKey: key)
                let hash = found.map { Self.fnv1a($0) } ?? "absent"
                return allowed.contains(hash) ? 0 : 2
            }
        } catch {
            return 3
        }
    }

    /// Reads the key back through the cache (a memory hit when the operation left a copy):
    /// 0 when `agrees`, 2 when not, 3 when the read itself failed (a fault: no verdict).
    private func readBack(_ cache: CaskCache, agrees: (Data?) -> Bool) -> Int32 {
        let found: Data?
        do { found = try cache.data(forKey: key) } catch { return 3 }
        return agrees(found) ? 0 : 2
    }

    /// FNV-1a, 64 bits, as 16 hex digits (the fault suite computes the same).
    static func fnv1a(_ bytes: Data) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 16).leftPadded(to: 16)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
