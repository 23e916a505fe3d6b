import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// The value operation `op` writes to `key`: names both, so a reader can tell where a value came
/// from and that it is whole.
func soakValue(op: Int, key: Int) -> Data {
    Data("op \(op) key \(key) ".utf8) + Data(repeating: UInt8(truncatingIfNeeded: op &* 31 &+ key), count: 40 + op % 200)
}

/// `cask-harness soak-writer DIR LOG`: puts and removes on 1,000 keys for `--seconds`, with small
/// segments (frequent rollovers) and a compaction every 2,000 operations. Each operation is
/// logged (`op ID put KEY` / `op ID del KEY`) before it is made, and `sync ID` after a `sync()`
/// that covers every operation up to ID returned. The log is how readers check what they see.
struct SoakWriter: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "soak-writer", abstract: "Write and log for the multi-process soak.", shouldDisplay: false)

    @Argument var directory: String
    @Argument var log: String
    @Option var seconds: Double = 60
    @Option var keys = 1000

    func run() throws {
        var options = StoreOptions()
        options.segmentSize = 64 << 10
        options.durability = .none
        options.logger.logLevel = .critical
        let store = try withStoreErrors { try DiskStore(directory: directory, options: options) }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        var rng = SystemRandomNumberGenerator()
        let end = Date().addingTimeInterval(seconds)
        var op = 0, compactions = 0
        while Date() < end {
            op += 1
            let key = Int.random(in: 0..<keys, using: &rng)
            let remove = Int.random(in: 0..<5, using: &rng) == 0
            try out.write(contentsOf: Data("op \(op) \(remove ? "del" : "put") \(key)\n".utf8))
            try withStoreErrors {
                if remove { try store.removeValue(forKey: "k\(key)") } else { try store.setValue(soakValue(op: op, key: key), forKey: "k\(key)") }
                if op % 50 == 0 { try store.sync() }
                if op % 2000 == 0 { try store.compact(); compactions += 1 }
            }
            if op % 50 == 0 { try out.write(contentsOf: Data("sync \(op)\n".utf8)) }
        }
        try withStoreErrors { try store.close() }
        try out.write(contentsOf: Data("sync \(op)\n".utf8))
        try out.close()
        print("writer: \(op) operations, \(compactions) compactions")
    }
}

/// `cask-harness soak-reader DIR LOG`: opens the store read-only beside the writer and, for
/// `--seconds`, refreshes it and checks every key against the writer's log: a value read must be
/// the key's value as of the last logged `sync` before the refresh, or the result of a later
/// operation on that key (logged before it was made). Exits 1 on any other value.
struct SoakReader: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "soak-reader", abstract: "Refresh and check for the multi-process soak.", shouldDisplay: false)

    @Argument var directory: String
    @Argument var log: String
    @Option var seconds: Double = 60
    @Option var keys = 1000

    /// One logged operation: its id, key and whether it removed the key.
    struct Op { var id: Int; var key: Int; var remove: Bool }

    func run() throws {
        var options = StoreOptions()
        options.isReadOnly = true
        options.logger.logLevel = .critical
        while (try? String(contentsOfFile: log, encoding: .utf8))?.contains("sync") != true { usleep(10_000) }
        let store = try withStoreErrors { try DiskStore(directory: directory, options: options) }
        let end = Date().addingTimeInterval(seconds)
        var rounds = 0, checks = 0, wrong = 0
        while Date() < end {
            let (_, synced) = try Self.readLog(log)
            try withStoreErrors { try store.refresh() }
            let (after, _) = try Self.readLog(log)   // every operation the refresh can have seen
            let allowed = Self.allowedResults(after, syncedThrough: synced, keys: keys)
            for key in 0..<keys {
                let value = try withStoreErrors { try store.value(forKey: "k\(key)") }
                checks += 1
                let ok = value.map { v in allowed[key].contains { $0.map { soakValue(op: $0, key: key) == v } ?? false } }
                    ?? allowed[key].contains(nil)
                if !ok {
                    wrong += 1
                    printError("reader: k\(key) read \(value.map { String(decoding: $0.prefix(24), as: UTF8.self) } ?? "nothing"), allowed ops \(allowed[key].map { $0.map(String.init) ?? "absent" })")
                }
            }
            rounds += 1
        }
        try withStoreErrors { try store.close() }
        print("reader: \(rounds) refreshes, \(checks) values checked, \(wrong) wrong")
        if wrong > 0 { throw Exit.no }
    }

    /// The operations of the log, and the id of the last `sync`.
    static func readLog(_ path: String) throws -> ([Op], Int) {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var ops: [Op] = []
        var synced = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == "sync", let id = Int(parts[1]) { synced = id }
            if parts.count == 4, parts[0] == "op", let id = Int(parts[1]), let key = Int(parts[3]) {
                ops.append(Op(id: id, key: key, remove: parts[2] == "del"))
            }
        }
        return (ops, synced)
    }

    /// For each key, the results a read may give (an op id whose value it is, or nil for
    /// absent): the key's state after the last synced operation, and every later operation's.
    static func allowedResults(_ ops: [Op], syncedThrough synced: Int, keys: Int) -> [[Int?]] {
        var state = [Int?](repeating: nil, count: keys)
        var later = [[Int?]](repeating: [], count: keys)
        for op in ops {
            if op.id <= synced { state[op.key] = op.remove ? nil : op.id } else { later[op.key].append(op.remove ? nil : op.id) }
        }
        return (0..<keys).map { [state[$0]] + later[$0] }
    }
}
