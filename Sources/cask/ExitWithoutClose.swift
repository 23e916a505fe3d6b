import ArgumentParser
import Cask
import Foundation

/// `cask exit-without-close DIR COUNT`: puts COUNT items through a store (or, with `--cache`,
/// the two-level cache) kept in a global, as an app's shared cache is, then calls `exit(0)`
/// without closing it. Hidden: the exit tests check that a normal exit keeps every put.
struct ExitWithoutClose: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exit-without-close", abstract: "Put and exit without close (for tests).", shouldDisplay: false)

    @Argument var directory: String
    @Argument var count: Int
    @Option var durability = "interval"
    @Flag var cache = false

    nonisolated(unsafe) static var kept: AnyObject?

    func run() throws {
        var options = StoreOptions()
        options.durability = durability == "none" ? .none : durability == "everyWrite" ? .everyWrite : .interval(.seconds(3600))
        options.flushInterval = .seconds(3600)   // nothing reaches the OS on its own before exit
        for i in 0..<max(0, count) {
            if i == 0 {
                if cache {
                    var o = CacheOptions()
                    o.disk = options
                    Self.kept = try withStoreErrors { try CaskCache(directory: directory, options: o) }
                } else {
                    Self.kept = try withStoreErrors { try DiskStore(directory: directory, options: options) }
                }
            }
            let value = Data("value-\(i)".utf8)
            if let c = Self.kept as? CaskCache { try withStoreErrors { try c.setData(value, forKey: "key-\(i)") } }
            if let s = Self.kept as? DiskStore { try withStoreErrors { try s.setValue(value, forKey: "key-\(i)") } }
        }
        Foundation.exit(0)
    }
}
