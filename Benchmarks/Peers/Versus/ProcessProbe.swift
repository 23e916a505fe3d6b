import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the process and its directory cost: clocks, peak memory, bytes written to storage,
/// bytes allocated on disk.
#if canImport(Glibc)
private let RUSAGE_SELF_ID = __rusage_who_t(RUSAGE_SELF.rawValue)
#else
private let RUSAGE_SELF_ID = RUSAGE_SELF
#endif

enum ProcessProbe {
    /// Monotonic nanoseconds.
    @inline(__always)
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Peak resident set size of this process, in bytes.
    static func peakResidentBytes() -> Int64 {
        var usage = rusage()
        getrusage(RUSAGE_SELF_ID, &usage)
        #if canImport(Darwin)
        return Int64(usage.ru_maxrss)
        #else
        return Int64(usage.ru_maxrss) * 1024
        #endif
    }

    /// Bytes this process (all threads) caused to be sent to storage (`write_bytes` of
    /// /proc/self/io: counted when a page is first dirtied; LMDB's and SQLite's in-place page
    /// updates count once per writeback, not per update). 0 where unavailable.
    static func storageWriteBytes() -> Int64 { ioCounter("write_bytes") }

    /// Bytes of `storageWriteBytes` that were never written after all (`cancelled_write_bytes`
    /// of /proc/self/io: dirty pages of files truncated or deleted before writeback). 0 where
    /// unavailable.
    static func cancelledWriteBytes() -> Int64 { ioCounter("cancelled_write_bytes") }

    /// Bytes this process handed to write(2), pwrite(2) and the like (`wchar` of
    /// /proc/self/io), whether or not they reached storage: counts an in-place page rewrite
    /// every time, where `storageWriteBytes` counts a page once while it stays dirty. 0 where
    /// unavailable.
    static func syscallWriteBytes() -> Int64 { ioCounter("wchar") }

    /// One counter of /proc/self/io by its name; 0 where unavailable.
    static func ioCounter(_ name: String) -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
        let prefix = name + ":"
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            return Int64(line.split(separator: " ").last ?? "0") ?? 0
        }
        return 0
    }

    /// Bytes allocated on disk by the files under `path` (st_blocks x 512, like du).
    static func diskBytes(_ path: String) -> Int64 {
        guard let e = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        for case let name as String in e {
            var st = stat()
            if lstat(path + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { total += Int64(st.st_blocks) * 512 }
        }
        return total
    }
}
