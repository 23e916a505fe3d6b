import Cask
import CaskTesting
import Foundation

/// Builds a store directory from the input (split into files at 0xFF 0xFE markers, named as
/// segments and hint files in turn, an empty part making no file; a seventh part becomes the index snapshot `INDEX`, its
/// trailer's checksum recomputed so that mutations reach the snapshot's own checks) and opens
/// it: any input must give a store or a typed error.
/// The directory lives on the in-memory `SimulatedFileSystem` (the same recovery code, no disk
/// I/O or fsync per input: thousands of executions a second instead of a few hundred).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var parts: [[UInt8]] = [[]]
    var i = 0
    while i < bytes.count {
        if i + 1 < bytes.count && bytes[i] == 0xFF && bytes[i + 1] == 0xFE { parts.append([]); i += 2; continue }
        parts[parts.count - 1].append(bytes[i])
        i += 1
    }
    let fs = SimulatedFileSystem()
    let root = "/fuzz"
    try? fs.createDirectory(root)
    for (n, part) in parts.prefix(6).enumerated() where !part.isEmpty {
        let name = String(format: "%010d", n / 2 + 1) + (n % 2 == 0 ? ".cask" : ".hint")
        guard let handle = try? fs.open(root + "/" + name, mode: .createTruncate) else { continue }
        part.withUnsafeBytes { raw in _ = try? fs.append(handle, raw) }   // the simulated file system writes all of it
        try? fs.sync(handle)
        fs.close(handle)
    }
    if parts.count > 6 {
        var snapshot = parts[6]
        if snapshot.count >= 8 {
            // The trailer: masked CRC32C of everything before it, then "IEND".
            let crc = maskedCRC32C(snapshot[..<(snapshot.count - 8)])
            for k in 0..<4 { snapshot[snapshot.count - 8 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
            for (k, b) in [0x49, 0x45, 0x4E, 0x44].enumerated() { snapshot[snapshot.count - 4 + k] = UInt8(b) }
        }
        if let handle = try? fs.open(root + "/INDEX", mode: .createTruncate) {
            snapshot.withUnsafeBytes { raw in _ = try? fs.append(handle, raw) }
            fs.close(handle)
        }
    }
    try? fs.syncDirectory(root)
    var options = StoreOptions()
    options.fileSystem = fs
    options.compaction.isAutomatic = false
    options.flushInterval = .seconds(3600)
    options.logger.logLevel = .critical
    if let store = try? DiskStore(directory: root, options: options) {
        for key in store.keys().prefix(20) { _ = try? store.value(forKey: key) }
        try? store.close()
    }
    return 0
}

/// CRC32C (bit by bit: fuzz inputs are small) with the format's mask (format-spec.md, "Checksums").
func maskedCRC32C(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var c: UInt32 = ~0
    for b in bytes {
        c ^= UInt32(b)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
    }
    let crc = ~c
    return ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
}
