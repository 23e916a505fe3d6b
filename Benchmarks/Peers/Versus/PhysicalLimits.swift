import CPeerLZ4
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the machine can do, measured in the same run: sequential disk write (then fdatasync)
/// and read (page cache dropped for the file with posix_fadvise), and LZ4 on the workload's
/// values. The bare-append engine ("append") covers write(2) + a Dictionary index.
struct PhysicalLimits: Codable {
    var sequentialWriteMBps: Double
    var sequentialReadMBps: Double
    var cachedReadMBps: Double
    var lz4Compress100BMBps: Double
    var lz4Decompress100BMBps: Double
    var lz4Compress4KiBMBps: Double
    var lz4Decompress4KiBMBps: Double
    var lz4Ratio4KiB: Double

    static func measure(scratch: String, megabytes: Int) throws -> PhysicalLimits {
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let path = scratch + "/sequential"
        defer { unlink(path) }
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw PeerBenchError("cannot create \(path)") }
        defer { close(fd) }
        var t0 = ProcessProbe.now()
        for _ in 0..<megabytes { _ = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        _ = fdatasync(fd)
        let writeSeconds = Double(ProcessProbe.now() - t0) / 1e9
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        func readAll() -> Double {
            t0 = ProcessProbe.now()
            var offset: off_t = 0
            while true {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
                if n <= 0 { break }
                offset += off_t(n)
            }
            return Double(ProcessProbe.now() - t0) / 1e9
        }
        #if os(Linux)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        #endif
        let readSeconds = readAll()
        let cachedSeconds = readAll()
        let mb = Double(megabytes) * 1.048576
        let (c100, d100, _) = lz4(size: 100)
        let (c4k, d4k, ratio) = lz4(size: 4096)
        return PhysicalLimits(
            sequentialWriteMBps: mb / writeSeconds, sequentialReadMBps: mb / readSeconds, cachedReadMBps: mb / cachedSeconds,
            lz4Compress100BMBps: c100, lz4Decompress100BMBps: d100, lz4Compress4KiBMBps: c4k, lz4Decompress4KiBMBps: d4k,
            lz4Ratio4KiB: ratio)
    }

    /// Compress and decompress speed (MB/s of uncompressed bytes) and ratio on the workload's values.
    static func lz4(size: Int) -> (Double, Double, Double) {
        let values = WorkloadData.values(size: size)
        let bound = Int(LZ4_compressBound(Int32(size)))
        var compressed = [[UInt8]](repeating: [UInt8](repeating: 0, count: bound), count: values.count)
        var lengths = [Int32](repeating: 0, count: values.count)
        let rounds = max(1, 200_000_000 / (size * values.count))
        var t0 = ProcessProbe.now()
        for _ in 0..<rounds {
            for i in values.indices {
                lengths[i] = values[i].withUnsafeBytes { v in compressed[i].withUnsafeMutableBytes { c in
                    LZ4_compress_default(v.baseAddress!.assumingMemoryBound(to: CChar.self), c.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(size), Int32(bound))
                } }
            }
        }
        let compressSeconds = Double(ProcessProbe.now() - t0) / 1e9
        var out = [UInt8](repeating: 0, count: size)
        t0 = ProcessProbe.now()
        for _ in 0..<rounds {
            for i in values.indices {
                _ = compressed[i].withUnsafeBytes { c in out.withUnsafeMutableBytes { o in
                    LZ4_decompress_safe(c.baseAddress!.assumingMemoryBound(to: CChar.self), o.baseAddress!.assumingMemoryBound(to: CChar.self), lengths[i], Int32(size))
                } }
            }
        }
        let decompressSeconds = Double(ProcessProbe.now() - t0) / 1e9
        let bytes = Double(rounds * values.count * size) / 1e6
        let ratio = Double(lengths.reduce(0) { $0 + Int($1) }) / Double(values.count * size)
        return (bytes / compressSeconds, bytes / decompressSeconds, ratio)
    }
}

struct PeerBenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
