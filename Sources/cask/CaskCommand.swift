import ArgumentParser
import Cask
import CaskFormat
import CaskToolSupport
import Foundation

@main
struct CaskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cask",
        abstract: "Inspect, verify and compact Cask stores.",
        discussion: """
            Exit status: 0 success; 1 the answer is no (a missing key or segment, problems found by verify); \
            3 the store could not be used (locked, not a store, newer format, I/O failure); \
            64 bad usage or input (an unknown verb or option, a value out of range, a --file that \
            cannot be opened or is a folder); \
            74 an I/O error on the command's own input or output (standard output could not be \
            written; --file or standard input failed while being read: nothing was stored).

            Encrypted stores: every verb reads the keys from the files the environment variable \
            CASK_KEY_FILE names, the current key first (CASK_KEY_FILE=new.key:old.key); each holds \
            32 bytes or 64 hex digits (`openssl rand -hex 32 > new.key` makes one). Keys are \
            never taken as arguments, which other users can see in ps. `cask dump` needs none.
            """,
        version: "cask 0.1.0 (format version \(Format.newestReadableVersion); 6 without encryption)",
        subcommands: [
            Demo.self, Put.self, Get.self, Remove.self, List.self, Stats.self, Verify.self, Compact.self, Trim.self, Pin.self, Unpin.self, Dump.self, Backup.self,
        ]
    )
}

extension CaskCommand {
    /// `cask` without a verb: the help, on standard error, and status 64 (it is a usage error;
    /// `cask --help` asks for the help and exits 0).
    func run() throws {
        printError(Self.helpMessage())
        throw Exit.usage
    }

    /// Parses, runs, then flushes standard output: a failed write there ends with a message on
    /// standard error and status 74. An argument that is not valid UTF-8 is refused (status 64).
    static func main() {
        guard argumentsAreValidUTF8() else {
            printError("cask: an argument is not valid UTF-8 text; name a key by its bytes with --key-hex (store paths must be UTF-8: rename the folder, or reach it through a symbolic link with a UTF-8 name)")
            Foundation.exit(Exit.usage.rawValue)
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exit(reporting: error)
        }
        flushOutputAndExit(0)
    }

    /// Ends the command for `error`: help and the version go to standard output (status 0,
    /// or 74 when it cannot be written), a usage error's message to standard error (64), and a
    /// command's own status (its message already written) as it is.
    static func exit(reporting error: Error) -> Never {
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        if code == .success {
            if !message.isEmpty { print(message) }
            flushOutputAndExit(0)
        }
        try? Console.flush()
        if !message.isEmpty { printError(message) }
        if code.rawValue == Exit.usage.rawValue, message.contains("Missing expected argument"),
           let negative = CommandLine.arguments.dropFirst().first(where: isNegativeNumber) {
            // The parser reads a negative number as an option ("Missing expected argument").
            printError("cask: \(negative) is a negative number: segment ids, counts and sizes are 0 or more")
        }
        Foundation.exit(code.rawValue)
    }

    private static func isNegativeNumber(_ argument: String) -> Bool {
        argument.count > 1 && argument.hasPrefix("-") && Double(argument) != nil
    }

    /// Writes what standard output still holds, then exits with `status`; 74 with a message
    /// on standard error when standard output could not be written.
    static func flushOutputAndExit(_ status: Int32) -> Never {
        do { try Console.flush() } catch {
            printError("cask: \(error)")
            Foundation.exit(Exit.ioError.rawValue)
        }
        Foundation.exit(status)
    }
}

/// What a command does with a store: the open that suits it.
enum OpenIntent {
    /// Reads only: opened with `isReadOnly` (nothing is written, no lock taken; a live store opens).
    case read
    /// Changes an existing store; a folder that holds no store is refused, never turned into one.
    case change
    /// Changes the store, creating it (and the folder) when missing.
    case create
}

/// Opens the store in `directory` for a command.
func openStore(_ directory: String, for intent: OpenIntent, configure: (inout StoreOptions) -> Void = { _ in }) throws -> DiskStore {
    let encryption = try toolEncryption()   // a bad key setting is reported first, whatever the folder holds
    var isDirectory: ObjCBool = false
    let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
    if intent != .create && !exists {
        throw noStore(directory, why: "the folder does not exist")
    }
    if intent == .change, isDirectory.boolValue,
       let names = try? FileManager.default.contentsOfDirectory(atPath: directory), !names.contains(where: { $0.hasSuffix(".cask") }) {
        throw noStore(directory, why: "the folder holds no segment file")
    }
    var options = StoreOptions()
    options.durability = .none
    options.logger.logLevel = .warning
    options.isReadOnly = intent == .read
    options.encryption = encryption
    configure(&options)
    return try withStoreErrors { try DiskStore(directory: directory, options: options) }
}
