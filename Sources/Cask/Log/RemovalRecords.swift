#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The removal records an open found (format-spec.md, "Record": kind 4, and "Recovery on
/// open", step 4): a key's record is removed by a prefix removal when the key starts with its
/// prefix and the record is older (a lower sequence number); a cache entry's record by a tag
/// removal when its entry header lists the tag and the record is older. One prefix or tag
/// keeps its newest removal.
///
/// Prefixes are checked once per index entry at the end of an open, by a linear walk of the
/// prefixes: a store holds few (compaction drops each once no record it removes can remain).
/// Tags need each tagged entry's header, read from its record after the open
/// (``DiskStore/removeTaggedEntries(_:now:)``).
struct RemovalRecords: Sendable {
    private var prefixes: [(prefix: [UInt8], sequence: UInt64)] = []
    /// The tag removals, newest per tag.
    private(set) var tags = TagRemovals()

    var isEmpty: Bool { prefixes.isEmpty }
    var count: Int { prefixes.count }

    /// Notes a removal record whose key field is `key` (a tag when `tagged`, else a prefix)
    /// with sequence number `sequence`.
    mutating func add(_ key: UnsafeRawBufferPointer, tagged: Bool, sequence: UInt64) {
        if tagged { tags.add(Array(key), sequence: sequence); return }
        if let n = prefixes.firstIndex(where: { $0.prefix.elementsEqual(key) }) {
            prefixes[n].sequence = max(prefixes[n].sequence, sequence)
        } else {
            prefixes.append((Array(key), sequence))
        }
    }

    /// Whether a record of `key` with sequence number `sequence` is removed by a prefix.
    func removes(key: UnsafeRawBufferPointer, sequence: UInt64) -> Bool {
        prefixes.contains { sequence < $0.sequence && Self.key(key, startsWith: $0.prefix) }
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

/// Tag removals (removal records with the tagged flag): a cache entry listing a tag is removed
/// by the tag's newest removal when its record is older. Few at a time: a call makes one, an
/// open finds the ones compaction has not dropped yet.
struct TagRemovals: Sendable {
    private(set) var removals: [(tag: [UInt8], sequence: UInt64)] = []

    var isEmpty: Bool { removals.isEmpty }
    /// The newest removal's sequence number: no record at or above it is removed.
    var newestSequence: UInt64 { removals.map(\.sequence).max() ?? 0 }

    /// Notes a removal of `tag` with sequence number `sequence`.
    mutating func add(_ tag: [UInt8], sequence: UInt64) {
        if let n = removals.firstIndex(where: { $0.tag == tag }) {
            removals[n].sequence = max(removals[n].sequence, sequence)
        } else {
            removals.append((tag, sequence))
        }
    }

    /// Whether a record with sequence number `sequence` whose entry header lists `tags` is removed.
    func removes(tags: [[UInt8]], sequence: UInt64) -> Bool {
        removals.contains { sequence < $0.sequence && tags.contains($0.tag) }
    }
}
