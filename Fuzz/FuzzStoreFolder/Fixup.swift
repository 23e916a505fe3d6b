/// Recomputes checksums after a mutation (format-spec.md: "Segment header", "Record", "Hint
/// file", "Index snapshot").
enum Fixup {
    static func checksums(of name: String, _ bytes: inout [UInt8], touched: Range<Int>) {
        if name.hasSuffix(".cask") {
            segment(&bytes, touched: touched)
        } else if name.hasSuffix(".hint"), bytes.count >= 56 {
            bytes.put(Checksum.masked(bytes[0..<40]), at: 40)
            bytes.put(Checksum.masked(bytes[48..<(bytes.count - 8)]), at: bytes.count - 8)
            for (k, b) in [0x48, 0x45, 0x4E, 0x44].enumerated() { bytes[bytes.count - 4 + k] = UInt8(b) }
        } else if name == "INDEX" {
            indexTrailer(&bytes)
        }
    }

    /// The header's checksum when the change touched it, then every record whose bytes it
    /// touched, following the records' lengths (as changed) from offset 48.
    static func segment(_ bytes: inout [UInt8], touched: Range<Int>) {
        if touched.lowerBound < 48, bytes.count >= 48 {
            // Version 7 and later keep the header checksum at 44, over bytes 0..<44.
            if bytes.u32(8) >= 7 { bytes.put(Checksum.masked(bytes[0..<44]), at: 44) } else { bytes.put(Checksum.masked(bytes[0..<40]), at: 40) }
        }
        var pos = 48
        while pos + 40 <= bytes.count {
            let size = 40 + bytes.u16(pos + 30) + Int(bytes.u32(pos + 32))
            guard bytes.u16(pos + 30) > 0, size <= bytes.count - pos else { return }
            if pos < touched.upperBound && touched.lowerBound < pos + size {
                bytes.put(Checksum.masked(bytes[(pos + 4)..<(pos + size)]), at: pos)
            }
            pos += size
        }
    }

    static func indexTrailer(_ bytes: inout [UInt8]) {
        guard bytes.count >= 8 else { return }
        bytes.put(Checksum.masked(bytes[0..<(bytes.count - 8)]), at: bytes.count - 8)
        for (k, b) in [0x49, 0x45, 0x4E, 0x44].enumerated() { bytes[bytes.count - 4 + k] = UInt8(b) }
    }

    /// Makes every hint header and the snapshot's segment marks name the segments' current sizes
    /// (and tail checksums), checksums recomputed: they then pass the open's staleness checks.
    static func describeSegments(_ files: inout [String: [UInt8]]) {
        for name in files.keys where name.hasSuffix(".hint") {
            let segment = String(name.dropLast(5)) + ".cask"
            guard var hint = files[name], hint.count >= 56, let size = files[segment]?.count else { continue }
            hint.put(UInt64(size), at: 24)
            checksums(of: name, &hint, touched: 0..<1)
            files[name] = hint
        }
        guard var index = files["INDEX"], index.count >= 72 else { return }
        // The count is read from a file the input may have changed: only marks inside it.
        let marks = min(Int(index.u32(12)), (index.count - 72) / 16)
        for m in 0..<marks {
            let at = 64 + 16 * m
            let name = String(repeating: "0", count: max(0, 10 - String(index.u32(at)).count)) + String(index.u32(at)) + ".cask"
            guard let segment = files[name] else { continue }
            index.put(Checksum.crc32c(segment[max(0, segment.count - 4096)...]), at: at + 4)
            index.put(UInt64(segment.count), at: at + 8)
        }
        indexTrailer(&index)
        files["INDEX"] = index
    }
}
