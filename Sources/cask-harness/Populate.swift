import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness populate DIR --count N`: writes N keys (16 bytes: `key-000000000001`) with
/// `--value-size`-byte values and closes the store, for measuring the tools on a large store.
struct Populate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fill a store with N keys (for tool measurements).", shouldDisplay: false)

    @Argument var directory: String
    @Option var count = 1_000_000
    @Option var valueSize = 100

    func validate() throws {
        try ArgumentValues.count(count, option: "--count")
        try ArgumentValues.count(valueSize, option: "--value-size")
    }

    func run() throws {
        var options = StoreOptions()
        options.durability = .none
        options.compaction.isAutomatic = false
        let store = try withStoreErrors { try DiskStore(directory: directory, options: options) }
        let value = Data(repeating: 0x61, count: valueSize)
        try withStoreErrors {
            for i in 0..<count {
                let digits = String(i)
                try store.setValue(value, forKey: "key-" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits)
            }
            try store.close()
        }
        print("populated \(directory) with \(count) keys")
    }
}
