import ArgumentParser
import Cask
import Foundation

/// Exit statuses: 0 success; 1 the answer is "no" (missing key, verification found problems);
/// 2 bad usage (ArgumentParser's own); 3 the store could not be used (locked, foreign, newer
/// format, I/O failure).
package enum Exit {
    package static let no = ExitCode(1)
    package static let storeError = ExitCode(3)
}

/// Runs `body`, turning a ``CaskError`` into a message on standard error and exit status 3.
package func withStoreErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CaskError {
        printError("cask: \(error)")
        throw Exit.storeError
    }
}

package func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
