import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a store (live or not) into a new folder that opens as a normal store.",
        discussion: "Opens the store read-only: the copy holds the store as it was when the command started. Sealed segments are hard-linked where the file system allows.")

    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The new folder (must not exist, or be empty).") var destination: String

    func run() throws {
        let store = try openStore(directory, for: .read)
        let result = try withStoreErrors { () throws -> (copiedBytes: Int, linkedBytes: Int) in
            defer { try? store.close() }
            do {
                return try store.backup(to: destination)
            } catch CaskError.invalidOption(let text) {
                printError("cask: \(text)")   // a destination that cannot be used: bad usage, not the store's fault
                throw Exit.usage
            }
        }
        print("backed up \(directory) to \(destination): \(Formatting.bytes(result.copiedBytes)) copied, \(Formatting.bytes(result.linkedBytes)) hard-linked")
    }
}
