import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness fill DIR`: fills a (small) file system until writes fail, then checks that the failure
/// is a typed out-of-space error and that everything acknowledged is still readable, after
/// removes, a compaction attempt and a reopen. Exit 0 when every check passes. Hidden: the real
/// disk-full tests run it on a tiny tmpfs or under `ulimit -f`.
struct Fill: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fill the disk and check recovery (for tests).", shouldDisplay: false)

    @Argument var directory: String
    @Option var segmentSize = 64 << 10
    @Option var valueSize = 700

    func run() throws {
        var options = StoreOptions()
        options.durability = .everyWrite
        options.segmentSize = segmentSize
        options.compression = .never
        options.compaction.isAutomatic = false
        options.logger.logLevel = .critical
        var store = try withStoreErrors { try DiskStore(directory: directory, options: options) }
        var acknowledged: [String: Data] = [:]
        var failure: CaskError?
        for i in 0..<1_000_000 {
            let key = "key-\(i)"
            let value = Data(repeating: UInt8(truncatingIfNeeded: i), count: valueSize)
            do {
                try store.setValue(value, forKey: key)
                acknowledged[key] = value
            } catch {
                failure = error
                break
            }
        }
        var problems: [String] = []
        guard let failure, failure.isOutOfSpace else {
            print("FAIL: writes stopped without a typed out-of-space error: \(failure.map { "\($0)" } ?? "none")")
            throw Exit.no
        }
        print("full after \(acknowledged.count) puts: \(failure)")
        func checkAll(_ s: DiskStore, _ stage: String) {
            for (k, v) in acknowledged where (try? s.value(forKey: k)) != v { problems.append("\(stage): \(k) lost") }
        }
        checkAll(store, "after the failure")
        // Writes keep failing cleanly while the disk is full.
        do { try store.setValue(Data(count: valueSize), forKey: "more"); acknowledged["more"] = Data(count: valueSize) } catch {
            if !error.isOutOfSpace { problems.append("second failure not typed: \(error)") }
        }
        for k in acknowledged.keys.sorted().prefix(5) {
            do { try store.removeValue(forKey: k); acknowledged[k] = nil } catch {
                if !error.isOutOfSpace { problems.append("remove failure not typed: \(error)") }
            }
        }
        do { try store.compact() } catch {
            if !error.isOutOfSpace { problems.append("compaction failure not typed: \(error)") }
        }
        checkAll(store, "after removes and compaction")
        do { try store.close() } catch { if !error.isOutOfSpace { problems.append("close failure not typed: \(error)") } }
        do {
            store = try DiskStore(directory: directory, options: options)
            checkAll(store, "after reopen")
            print("reopened: \(store.count) items")
        } catch {
            if !error.isOutOfSpace { problems.append("reopen failure not typed: \(error)") }
            print("reopen refused while the disk is full: \(error)")
        }
        for p in problems { print("FAIL: \(p)") }
        print(problems.isEmpty ? "OK" : "\(problems.count) problems")
        if !problems.isEmpty { throw Exit.no }
    }
}
