import ArgumentParser
import Cask
import Foundation

/// Exit statuses: 0 success; 1 the answer is "no" (missing key, verification found problems);
/// 2 bad usage (ArgumentParser's own); 3 the store could not be used (locked, foreign, newer
/// format, I/O failure).
enum Exit {
    static let no = ExitCode(1)
    static let storeError = ExitCode(3)
}

@main
struct CaskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cask",
        abstract: "Inspect, verify, compact and benchmark Cask stores.",
        subcommands: [
            Demo.self, Put.self, Get.self, Remove.self, List.self, Stats.self, Verify.self, Compact.self, Trim.self, Pin.self, Unpin.self, Dump.self, Torture.self, Fill.self, ExitWithoutClose.self, Bench.self, CompactionBench.self,
        ]
    )
}

/// Runs `body`, turning a ``CaskError`` into a message on standard error and exit status 3.
func withStoreErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CaskError {
        printError("cask: \(error)")
        throw Exit.storeError
    }
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

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
