import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness footprint DIR`: opens the store in DIR (as a writer, then closes it) and
/// prints the growth of this process's anonymous memory (`RssAnon`, /proc/self/status) that
/// the open caused: the index, the write buffer and every other heap the open store holds.
/// Run in a fresh process, so no earlier allocation is reused.
struct Footprint: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Anonymous memory an open store holds.", shouldDisplay: false)

    @Argument var directory: String

    func run() throws {
        let before = try Self.anonymousKilobytes()
        let start = DispatchTime.now().uptimeNanoseconds
        var options = StoreOptions()
        options.encryption = try toolEncryption()   // CASK_KEY_FILE, as for `cask`
        let store = try withStoreErrors { [options] in try DiskStore(directory: directory, options: options) }
        let openSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let after = try Self.anonymousKilobytes()
        let keys = store.count, stats = store.statistics
        let closeStart = DispatchTime.now().uptimeNanoseconds
        try withStoreErrors { try store.close() }
        let closeSeconds = Double(DispatchTime.now().uptimeNanoseconds - closeStart) / 1e9
        let perKey = keys == 0 ? 0 : Double(after - before) * 1024 / Double(keys)
        print(String(format: "footprint %d keys: %.1f bytes per key of anonymous memory (%d KB); the index counts %.1f; from the snapshot: %@; open %.3f s, close %.3f s",
                     keys, perKey, after - before, Double(stats.indexMemoryBytes) / Double(max(1, keys)),
                     stats.indexLoadedFromSnapshot ? "yes" : "no", openSeconds, closeSeconds))
    }

    /// `RssAnon` of this process, in KB.
    static func anonymousKilobytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
              let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) else {
            throw ValidationError("no RssAnon in /proc/self/status")
        }
        return kb
    }
}
