/// Entry points for the libFuzzer targets in `Fuzz/` (SPI `Fuzzing`: not part of any public API;
/// the `Cask` library does not export them).
/// Each must return normally for any input: no trap, no out-of-bounds access, no hang.
@_spi(Fuzzing)
public enum FuzzEntryPoints {
    /// Decodes a record at every offset of `bytes`.
    public static func decodeRecords(_ bytes: UnsafeRawBufferPointer) -> Int {
        var valid = 0
        for offset in 0..<min(bytes.count, 64) {
            if case .record = RecordCodec.decode(bytes, at: offset) { valid += 1 }
        }
        return valid
    }

    /// Scans `bytes` as a whole segment file.
    public static func scanSegment(_ bytes: UnsafeRawBufferPointer) -> Int {
        var records = 0
        _ = try? SegmentScanner.scan(bytes) { _, _ in records += 1 }
        return records
    }

    /// Parses `bytes` as the hint file of a segment whose size is given by the first 4 bytes.
    public static func parseHint(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= 4 else { return 0 }
        let size = UInt64(bytes.u32(0))
        var entries = 0
        let hint = UnsafeRawBufferPointer(rebasing: bytes[4...])
        _ = HintFile.parse(hint, segmentID: hint.count >= 24 ? hint.u64(16) : 0, segmentSize: size) { _, _ in entries += 1 }
        return entries
    }

    /// Decompresses `bytes` (after a 2-byte claimed length) as an LZ4 block.
    public static func decompress(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 2 else { return false }
        let length = Int(bytes.u16(0)) + 1
        var out = [UInt8](repeating: 0, count: length)
        return out.withUnsafeMutableBytes { LZ4.decompress(UnsafeRawBufferPointer(rebasing: bytes[2...]), into: $0) }
    }

    /// Every value record with a valid checksum that starts at any offset of `bytes` (a whole
    /// segment file, damaged or not): its key, and its value as stored or, compressed, as its LZ4
    /// block decodes (nil when it does not). For the FuzzStoreFolder oracle: a value a store
    /// returns must have been written to its key, or be in such a record of that key.
    public static func checksummedValues(_ bytes: UnsafeRawBufferPointer, _ body: (_ key: [UInt8], _ value: [UInt8]?) -> Void) {
        for offset in 0..<bytes.count {
            guard case .record(let h) = RecordCodec.decode(bytes, at: offset), h.kind == .value else { continue }
            let keyStart = offset + Format.recordHeaderSize
            let key = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[keyStart..<(keyStart + h.keyLength)]))
            let stored = UnsafeRawBufferPointer(rebasing: bytes[(keyStart + h.keyLength)..<(offset + h.encodedSize)])
            guard h.isCompressed else { body(key, [UInt8](stored)); continue }
            var out = [UInt8](repeating: 0, count: h.originalLength)
            let ok = out.withUnsafeMutableBytes { LZ4.decompress(stored, into: $0) }
            body(key, ok ? out : nil)
        }
    }
}
