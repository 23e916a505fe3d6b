#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The removal records an open found (format-spec.md, "Record": kind 4, and "Recovery on
/// open", step 4): a key's record is removed by one when the key starts with its prefix and
/// the record is older (a lower sequence number). One prefix keeps its newest removal.
///
/// Checked once per index entry at the end of an open, by a linear walk of the prefixes: a
/// store holds few (compaction drops each once no record it removes can remain).
struct PrefixRemovals: Sendable {
    private var removals: [(prefix: [UInt8], sequence: UInt64)] = []

    var isEmpty: Bool { removals.isEmpty }
    var count: Int { removals.count }

    /// Notes a removal record of `prefix` with sequence number `sequence`.
    mutating func add(prefix: UnsafeRawBufferPointer, sequence: UInt64) {
        if let n = removals.firstIndex(where: { $0.prefix.elementsEqual(prefix) }) {
            removals[n].sequence = max(removals[n].sequence, sequence)
        } else {
            removals.append((Array(prefix), sequence))
        }
    }

    /// Whether a record of `key` with sequence number `sequence` is removed.
    func removes(key: UnsafeRawBufferPointer, sequence: UInt64) -> Bool {
        removals.contains { sequence < $0.sequence && Self.key(key, startsWith: $0.prefix) }
    }

    /// Whether the bytes of `key` start with `prefix`.
    @inline(__always)
    static func key(_ key: UnsafeRawBufferPointer, startsWith prefix: [UInt8]) -> Bool {
        guard key.count >= prefix.count else { return false }
        return prefix.withUnsafeBytes { p in
            p.count == 0 || memcmp(key.baseAddress!, p.baseAddress!, p.count) == 0
        }
    }
}
