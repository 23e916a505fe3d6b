import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

@main
struct CaskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cask",
        abstract: "Inspect, verify and compact Cask stores.",
        subcommands: [
            Demo.self, Put.self, Get.self, Remove.self, List.self, Stats.self, Verify.self, Compact.self, Trim.self, Pin.self, Unpin.self, Dump.self,
        ]
    )
}

/// Opens the store in `directory` for a command. Commands that only read refuse to create one.
func openStore(_ directory: String, creating: Bool = false, configure: (inout StoreOptions) -> Void = { _ in }) throws -> DiskStore {
    if !creating && !FileManager.default.fileExists(atPath: directory) {
        printError("cask: no store at \(directory)")
        throw Exit.storeError
    }
    var options = StoreOptions()
    options.durability = .none
    options.logger.logLevel = .warning
    configure(&options)
    return try withStoreErrors { try DiskStore(directory: directory, options: options) }
}
