import ArgumentParser
import Cask
import Foundation

/// Exit statuses: 0 success; 1 the answer is "no" (a missing key or segment, verification found
/// problems); 3 the store could not be used (locked, not a store, newer format, I/O failure);
/// 64 bad usage or input (EX_USAGE: an unknown verb or option, a value out of range, a value
/// file that cannot be opened or is a folder); 74 an I/O error on the command's own input or
/// output (EX_IOERR: standard output could not be written, the value's file or standard input
/// failed while being read). The CaskCommand help text says the same.
package enum Exit {
    package static let no = ExitCode(1)
    package static let storeError = ExitCode(3)
    package static let usage = ExitCode(64)
    package static let ioError = ExitCode(74)
}

/// Runs `body`, turning a ``CaskError`` into a message on standard error and exit status 3.
package func withStoreErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CaskError {
        printError("cask: \(message(for: error))")
        throw Exit.storeError
    }
}

/// The message a command prints for `error`: the library's, except where that names library
/// options a command-line user never sets.
package func message(for error: CaskError) -> String {
    switch error {
    case let .noStoreYet(path):
        return noStoreMessage(path, why: "the folder is empty or holds no segment file")
    case let .encryptionKeyMissing(path, keyID, given) where given.isEmpty:
        return "\(path) is encrypted (key id \(StoreEncryption.keyIDText(keyID))) and no key was given; the store was not opened: set CASK_KEY_FILE to the file holding that key (`CASK_KEY_FILE=store.key cask ...`)"
    default:
        return "\(error)"
    }
}

/// The one message every verb gives for a folder that holds no store (`why` says what was
/// found), naming both fixes.
package func noStoreMessage(_ directory: String, why: String) -> String {
    "no store at \(directory): \(why); check the path, or create a store with `cask put \(directory) KEY VALUE`"
}

/// Prints ``noStoreMessage(_:why:)`` and returns exit status 3.
package func noStore(_ directory: String, why: String) -> ExitCode {
    printError("cask: " + noStoreMessage(directory, why: why))
    return Exit.storeError
}

/// Writes a line to standard error (best effort, never a trap).
package func printError(_ text: String) {
    Console.err(text + "\n")
}
