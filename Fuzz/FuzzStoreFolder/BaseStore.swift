import Cask
import CaskTesting
import Foundation

/// The store every input starts from, made once by the library on the in-memory file system:
/// several segments of 4 KiB (log and compacted), their hint files, the index snapshot of the last
/// clean close and `LOCK`; and every value ever written to each key (the oracle's model).
struct BaseStore: Sendable {
    static let root = "/store"
    /// File name to contents.
    var files: [String: [UInt8]] = [:]
    /// Key to every value ever written to it.
    var written: [String: Set<[UInt8]>] = [:]

    static let shared: BaseStore = make()

    static func options(_ fs: SimulatedFileSystem) -> StoreOptions {
        var o = StoreOptions()
        o.fileSystem = fs
        o.segmentSize = 4096
        o.compaction.isAutomatic = false
        o.flushInterval = .seconds(3600)
        o.logger.logLevel = .critical
        return o
    }

    /// Two sessions of puts, removes, a prefix removal and a compaction. A failure here is a bug
    /// in the harness or the library, not in an input: it stops the fuzzer at once.
    static func make() -> BaseStore {
        var base = BaseStore()
        let fs = SimulatedFileSystem()
        do {
            var store = try DiskStore(directory: root, options: options(fs))
            for round in 0..<9 {
                if round == 3 || round == 6 {
                    if round == 3 { try store.compact() }
                    try store.close()
                    store = try DiskStore(directory: root, options: options(fs))
                }
                try base.writeRound(round, to: store)
            }
            try store.close()
        } catch {
            FileHandle.standardError.write(Data(("FuzzStoreFolder: cannot make the base store: \(error)\n").utf8))
            abort()
        }
        base.files = (try? fs.files(in: root)) ?? [:]
        return base
    }

    /// One round: every key gets a value (some compressible, some removed), one prefix removal.
    mutating func writeRound(_ round: Int, to store: DiskStore) throws {
        for k in 0..<10 {
            let key = "key\(k)"
            if (round + k) % 5 == 4 {
                _ = try store.removeValue(forKey: key)
                continue
            }
            var value = Array("r\(round)k\(k)-".utf8)
            let length = k == 3 ? 700 : 40 + (round * 37 + k * 53) % 200
            for i in value.count..<length { value.append(k == 3 ? UInt8(97 + i % 7) : UInt8(truncatingIfNeeded: i &* 31 &+ round &* 7 &+ k)) }
            try store.setValue(value, forKey: key)
            written[key, default: []].insert(value)
        }
        if round == 2 { _ = try store.removeValues(withPrefix: "key1") }
    }

    /// The files, written to a fresh simulated file system under ``root``.
    func install(_ files: [String: [UInt8]]) -> SimulatedFileSystem {
        (try? SimulatedFileSystem.holding(files, in: Self.root)) ?? SimulatedFileSystem()
    }
}
