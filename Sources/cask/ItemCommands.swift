import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

struct Put: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Store a value (from the argument, --file, or standard input).")

    @Argument(help: "The store directory (created when missing).") var directory: String
    @Argument(help: "The key.") var key: String
    @Argument(help: "The value; omit it to read --file or standard input.") var value: String?
    @Option(help: "Read the value from this file.") var file: String?
    @Option(help: "Time to live in seconds.") var ttl: Double?
    @Flag(help: "Pin the item (exempt from TTL and age limits, evicted last).") var pin = false

    func run() throws {
        let data: Data
        if let value {
            data = Data(value.utf8)
        } else if let file {
            guard let d = FileManager.default.contents(atPath: file) else {
                printError("cask: cannot read \(file)")
                throw Exit.storeError
            }
            data = d
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        let store = try openStore(directory, for: .create)
        try withStoreErrors {
            try store.setValue(data, forKey: key, timeToLive: ttl.map { .milliseconds(Int64($0 * 1000)) }, isPinned: pin)
            try store.close()
        }
    }
}

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write a value to standard output; exit 1 when the key is missing.")

    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The key.") var key: String

    func run() throws {
        let store = try openStore(directory, for: .read)
        let value = try withStoreErrors { try store.value(forKey: key) }
        try withStoreErrors { try store.close() }
        guard let value else {
            printError("cask: no value for key \(key)")
            throw Exit.no
        }
        FileHandle.standardOutput.write(value)
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a key; exit 1 when it was not there.")

    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The key.") var key: String

    func run() throws {
        let store = try openStore(directory, for: .change)
        let removed = try withStoreErrors { try store.removeValue(forKey: key) }
        try withStoreErrors { try store.close() }
        if !removed {
            printError("cask: no value for key \(key)")
            throw Exit.no
        }
    }
}
