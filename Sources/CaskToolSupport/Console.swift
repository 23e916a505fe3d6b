#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Standard output and standard error, written with `write(2)`. A failed write to standard
/// output is remembered and reported by ``flush()`` (so the command ends with a message and a
/// non-zero status, as coreutils do), never a trap (Foundation's `FileHandle.write` traps) and
/// never lost (`print`'s buffer drops a failed flush at exit). Thread-safe.
package enum Console {
    private static let pending = Mutex<[UInt8]>([])
    /// The `errno` of the first failed write to standard output.
    private static let failure = Mutex<Int32?>(nil)

    /// Appends `text` to standard output (written in 64 KiB pieces, and by ``flush()``).
    package static func out(_ text: String) { out(bytes: Array(text.utf8)) }

    /// Appends bytes to standard output.
    package static func out(bytes: [UInt8]) {
        pending.withLock { buffer in
            buffer.append(contentsOf: bytes)
            if buffer.count >= 64 << 10 { writePending(&buffer) }
        }
    }

    /// Writes what is buffered. Throws the first error any write to standard output met.
    package static func flush() throws(OutputError) {
        pending.withLock { writePending(&$0) }
        if let code = failure.withLock({ $0 }) { throw OutputError(errno: code) }
    }

    /// Writes `text` to standard error at once. Best effort: a failed write there cannot be
    /// reported anywhere, and the command's exit status already says what happened.
    package static func err(_ text: String) { _ = writeAll(Array(text.utf8), to: 2) }

    private static func writePending(_ buffer: inout [UInt8]) {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard !buffer.isEmpty, failure.withLock({ $0 }) == nil else { return }
        if let code = writeAll(buffer, to: 1) { failure.withLock { $0 = code } }
    }

    /// Writes every byte, retrying short writes and EINTR; returns the `errno` of a failure.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(descriptor, raw.baseAddress! + done, raw.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            done += n
        }
        return nil
    }
}

/// Standard output could not be written (a full disk, a closed descriptor).
package struct OutputError: Error, CustomStringConvertible {
    package var errno: Int32
    package init(errno: Int32) { self.errno = errno }
    package var description: String {
        "write error on standard output: \(String(cString: strerror(errno))) (errno \(errno)); check where the output goes (a full disk, a closed pipe)"
    }
}

/// Whether every command-line argument is valid UTF-8 (Swift replaces invalid bytes with U+FFFD,
/// which would make two different byte strings the same key).
package func argumentsAreValidUTF8() -> Bool {
    (0..<Int(CommandLine.argc)).allSatisfy { i in
        guard let raw = CommandLine.unsafeArgv[i] else { return true }
        return String(validatingCString: raw) != nil
    }
}
