import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// The key argument and `--key-hex`, shared by the verbs that name one item.
struct KeyArguments: ParsableArguments {
    @Argument(help: "The key (UTF-8 text; with --key-hex, its bytes in hex).") var key: String
    @Flag(help: "The key is given as hex digits of its UTF-8 bytes (e.g. 6b6579 for 'key').") var keyHex = false

    /// The key the arguments name (validated: 1 to 1,024 bytes of UTF-8).
    func resolved() throws -> String { try ArgumentValues.key(key, isHex: keyHex) }

    func validate() throws { _ = try resolved() }
}

struct Put: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Store a value (from the argument, --file, or standard input).")

    @Argument(help: "The store directory (created when missing).") var directory: String
    @OptionGroup var key: KeyArguments
    @Argument(help: "The value; omit it to read --file or standard input.") var value: String?
    @Option(help: "Read the value from this file.") var file: String?
    @Option(parsing: .unconditional, help: "Time to live: 90s, 15m, 2h, 7d (a plain number is seconds).") var ttl: String?
    @Flag(help: "Pin the item (exempt from TTL and age limits, evicted last).") var pin = false

    func validate() throws {
        if let ttl { _ = try ArgumentValues.milliseconds(ttl, option: "--ttl") }
        if value != nil && file != nil { throw ValidationError("give the value as an argument or with --file, not both") }
    }

    func run() throws {
        let data = try readValue()
        let timeToLive = try ttl.map { Duration.milliseconds(try ArgumentValues.milliseconds($0, option: "--ttl")) }
        let store = try openStore(directory, for: .create)
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        try withStoreErrors {
            try store.setValue(data, forKey: try key.resolved(), timeToLive: timeToLive, isPinned: pin)
            try store.close()
        }
    }

    /// The value: the argument, or every byte of --file or standard input, read before the
    /// store is opened (a failed read stores nothing).
    private func readValue() throws -> Data {
        if let value { return Data(value.utf8) }
        do throws(InputError) {
            if let file { return Data(try InputReader.read(path: file)) }
            return Data(try InputReader.read(descriptor: STDIN_FILENO, source: "standard input"))
        } catch {
            printError("cask: \(error)")
            throw error.exitCode
        }
    }
}

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a value to standard output; exit 1 when the key is missing, 3 when it is missing from a store with damaged records (which may have held it).")

    @Argument(help: "The store directory.") var directory: String
    @OptionGroup var key: KeyArguments

    func run() throws {
        let name = try key.resolved()
        let store = try openStore(directory, for: .read)
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        let value = try withStoreErrors { try store.value(forKey: name) }
        let damaged = store.statistics.corruptRecords
        try withStoreErrors { try store.close() }
        guard let value else {
            // The library answers a damaged record as a miss (a cache refills), found at the open
            // or by this read; the tool does not call that "no such key": status 3.
            if damaged > 0 {
                printError("cask: no readable value for key \(ArgumentValues.escaped(name)): \(directory) holds \(Formatting.count(damaged, "damaged record")), which may include it; `cask verify \(directory)` names them, and `cask verify \(directory) --repair` removes the damage and keeps every intact key")
                throw Exit.storeError
            }
            printError("cask: no value for key \(ArgumentValues.escaped(name))")
            throw Exit.no
        }
        Console.out(bytes: Array(value))
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a key, with --prefix every key that starts with it, or with --tag every cache entry tagged with it; exit 1 when there was none.")

    @Argument(help: "The store directory.") var directory: String
    @OptionGroup var key: KeyArguments
    @Flag(help: "Remove every key that starts with KEY (its UTF-8 bytes), durably, pinned ones included; prints how many.") var prefix = false
    @Flag(help: "Remove every cache entry whose tags include KEY (1 to 255 bytes), durably; prints how many.") var tag = false

    func validate() throws {
        if prefix && tag { throw ValidationError("--prefix and --tag cannot be used together") }
        if tag {
            let name = try key.resolved()
            guard name.utf8.count <= 255 else { throw ValidationError("a tag is 1 to 255 bytes of UTF-8 (got \(name.utf8.count) bytes)") }
        }
    }

    func run() throws {
        let name = try key.resolved()
        let store = try openStore(directory, for: .change)
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        if tag || prefix {
            // A group at once: every entry with the tag, or every key under the prefix.
            let removed = try withStoreErrors { tag ? try store.removeValues(taggedWith: name) : try store.removeValues(withPrefix: name) }
            try withStoreErrors { try store.close() }
            print("removed \(removed) items")
            if removed == 0 {
                printError(tag ? "cask: no entry is tagged \(ArgumentValues.escaped(name))" : "cask: no key starts with \(ArgumentValues.escaped(name))")
                throw Exit.no
            }
            return
        }
        let removed = try withStoreErrors { try store.removeValue(forKey: name) }
        try withStoreErrors { try store.close() }
        if !removed {
            printError("cask: no value for key \(ArgumentValues.escaped(name))")
            throw Exit.no
        }
    }
}
