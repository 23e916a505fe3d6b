/// CRC32C with a table, and the format's mask (format-spec.md, "Conventions").
enum Checksum {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    static func crc32c(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = ~0
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return ~c
    }

    static func masked(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        let crc = crc32c(bytes)
        return ((crc >> 15) | (crc << 17)) &+ 0xA282_EAD8
    }
}

extension Array where Element == UInt8 {
    func u16(_ at: Int) -> Int { Int(self[at]) | Int(self[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(self[at + $1]) << (8 * UInt32($1)) } }
    func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(self[at + $1]) << (8 * UInt64($1)) } }
    mutating func put(_ v: UInt32, at: Int) { for i in 0..<4 { self[at + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) } }
    mutating func put(_ v: UInt64, at: Int) { for i in 0..<8 { self[at + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) } }
}
