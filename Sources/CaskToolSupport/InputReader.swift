#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser

/// Reads a command's input whole (`cask put --file`, or standard input) with `open(2)` and
/// `read(2)`: pipes, FIFOs and devices (`/dev/stdin`, `<(command)`) have no size to read up to,
/// and a failure keeps its errno (Foundation's `FileHandle.readToEnd()` reports an I/O error as
/// "NSCocoaErrorDomain error 256", without the file or the errno).
package enum InputReader {
    /// Every byte of the file at `path`, or its first `limit` bytes and one more when it is
    /// longer (so that a caller can tell; `/dev/zero` would otherwise be read until memory ran out).
    package static func read(path: String, limit: Int = .max) throws(InputError) -> [UInt8] {
        var descriptor: Int32
        repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw InputError(source: path, call: "open", errno: errno) }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, source: path, limit: limit)
    }

    /// Like ``read(path:limit:)``, for a file that must be a regular file (a key file): opened
    /// without blocking (a FIFO with no writer would hang the open) and checked with `fstat`
    /// before anything is read; a FIFO, socket, device or folder throws an error whose
    /// ``InputError/isNotARegularFile`` is true (bad usage, 64). Symbolic links are followed (a mounted secret is
    /// often one).
    package static func readRegularFile(path: String, limit: Int) throws(InputError) -> [UInt8] {
        var descriptor: Int32
        repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw InputError(source: path, call: "open", errno: errno) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw InputError(source: path, call: "fstat", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw InputError(source: path, call: "fstat", errno: 0, isNotARegularFile: true) }
        return try read(descriptor: descriptor, source: path, limit: limit)
    }

    /// Every byte `descriptor` gives until end of file (or `limit` bytes and one more); `source`
    /// names it in errors (a path, or "standard input"). Retries EINTR; does not close the descriptor.
    package static func read(descriptor: Int32, source: String, limit: Int = .max) throws(InputError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= limit {
            let room = limit - bytes.count   // >= 0 here; +1 below shows whether the input is longer
            let want = room >= chunk.count ? chunk.count : room + 1
            let n = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, want) }
            if n == 0 { return bytes }
            if n > 0 {
                bytes.append(contentsOf: chunk[..<n])
            } else if errno != EINTR {
                throw InputError(source: source, call: "read", errno: errno)
            }
        }
        return bytes
    }
}

/// `read(2)` (at file scope: inside ``InputReader`` the name means its own methods).
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// A command's input could not be read: the path or "standard input", the call that failed,
/// its errno, and (in the description) the fix. `cask put` reads its value before it opens the
/// store, so nothing was stored.
package struct InputError: Error, CustomStringConvertible {
    package var source: String
    /// `open` or `read`.
    package var call: String
    package var errno: Int32

    /// The path names a FIFO, socket, device or folder where a regular file is required.
    package var isNotARegularFile: Bool

    package init(source: String, call: String, errno: Int32, isNotARegularFile: Bool = false) {
        (self.source, self.call, self.errno, self.isNotARegularFile) = (source, call, errno, isNotARegularFile)
    }

    /// What the system says `errno` means (`strerror`).
    package var systemMessage: String { isNotARegularFile ? "not a regular file" : String(cString: strerror(errno)) }

    private var isStandardInput: Bool { source == "standard input" }

    /// 64 (bad usage or input) when the path names nothing readable (missing, a folder, not
    /// permitted): the command line must change. 74 (EX_IOERR) when a read, or an open of a
    /// path that is there, failed (EIO, ENOSPC, EMFILE...): an I/O error, as for standard output.
    package var exitCode: ExitCode {
        isNotARegularFile || [ENOENT, ENOTDIR, EACCES, EPERM, EISDIR, ENAMETOOLONG, ELOOP].contains(errno) ? Exit.usage : Exit.ioError
    }

    package var description: String {
        let what = call == "open" ? "cannot open \(source) to read the value" : "cannot read the value from \(source)"
        return "\(what): \(systemMessage) (errno \(errno)); nothing was stored; \(advice)"
    }

    private var advice: String {
        switch errno {
        case ENOENT: return "check the path"
        case ENOTDIR: return "a part of the path is a file, not a folder: check the path"
        case EACCES, EPERM: return "check the permissions of the file and of its folders"
        case EISDIR where isStandardInput: return "redirect standard input from a file, not a folder"
        case EISDIR: return "give --file a file, a pipe or a device"
        case EIO: return "the device reported an I/O error: check the disk (dmesg), then run the command again"
        default: return isStandardInput ? "check what feeds standard input, or give the value as an argument or with --file" : "check the file, then run the command again"
        }
    }
}
