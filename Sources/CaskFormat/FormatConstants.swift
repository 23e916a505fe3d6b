/// Sizes, magic numbers and flag bits of the on-disk format, shared by writer and reader.
/// The authority is `format-spec.md`; a change here is a change there.
package enum Format {
    /// The format version this build writes for everything but sealed segments. Version 2
    /// added pin records (record kind 3), version 3 compact hint entries, version 4 cache
    /// entries (record flag ``RecordFlag/entry``), version 5 removal records (record kind 4),
    /// version 6 tags (record flag ``RecordFlag/tagged``); every older version is read too.
    package static let version: UInt32 = 6
    /// Version 7: sealed records (``RecordFlag/sealed``) and the key id in the segment header
    /// (its checksum at 44), in the segments of a store with encryption on. Still read.
    package static let firstSealedVersion: UInt32 = 7
    /// Version 8: sealed records whose seals also bind the store's id (``StoreIDFile``), written
    /// in the segments of a store with encryption on; the layout is version 7's.
    package static let sealedVersion: UInt32 = 8
    /// The newest format version this build reads.
    package static let newestReadableVersion: UInt32 = sealedVersion
    /// The oldest format version this build reads.
    package static let oldestReadableVersion: UInt32 = 1

    /// "CASKSEG\0": the first eight bytes of every segment file.
    package static let segmentMagic: [UInt8] = Array("CASKSEG\0".utf8)
    /// "CASKHNT\0": the first eight bytes of every hint file.
    package static let hintMagic: [UInt8] = Array("CASKHNT\0".utf8)
    /// "HEND": the last four bytes of a complete hint file.
    package static let hintEndMagic: UInt32 = 0x444E_4548

    package static let segmentHeaderSize = 48
    package static let recordHeaderSize = 40
    /// Where a record's key length (u16) lies in its header.
    package static let recordKeyLengthOffset = 30
    /// Where a record's expiry field (i64; a tombstone's or pin record's sequence) lies in its header.
    package static let recordExpiryOffset = 20
    package static let hintHeaderSize = 48
    /// A hint entry of versions 1 and 2, before its key (version 3: ``HintEntryCodec``).
    package static let version2HintEntrySize = 52
    package static let hintTrailerSize = 8

    /// The bytes a sealed value adds to what it seals: key id, nonce and tag.
    package enum Seal {
        package static let keyIDSize = 4
        package static let nonceSize = 12
        package static let tagSize = 16
        /// Key id and nonce, in front of the ciphertext.
        package static let prefixSize = keyIDSize + nonceSize
        package static let overhead = prefixSize + tagSize
    }

    /// The seal a store with encryption on appends to its hint files and index snapshot
    /// (format-spec.md, "File seals"): key id, 8 random bytes (the nonces' first 8), one 16-byte
    /// GMAC tag per section, end magic.
    package enum FileSeal {
        package static let baseSize = 8
        package static let tagSize = 16
        /// "HSEL", after a hint file's trailer.
        package static let hintMagic: UInt32 = 0x4C45_5348
        /// "ISEL", after an index snapshot's trailer.
        package static let indexMagic: UInt32 = 0x4C45_5349
        /// The seal's size for `sections` sections.
        package static func size(sections: Int) -> Int { Seal.keyIDSize + baseSize + sections * tagSize + 4 }
    }

    /// The store id file (format-spec.md, "Store id"): 48 bytes, "CASKSID\0" first.
    package enum StoreID {
        package static let magic: [UInt8] = Array("CASKSID\0".utf8)
        package static let version: UInt32 = 1
        package static let fileSize = 48
        package static let idSize = 16
        /// What a seal binds (format version 8): the id and the legacy limit, file bytes 16..<40.
        package static let bindingRange = 16..<40
    }

    /// The largest sequence number a writer of a store can issue: 2^56 − 1. Sequence numbers
    /// start at 1 and grow by one per record, so a writer appending ten million records a second
    /// would take over 200 years to reach it. A record, hint entry, segment header or index
    /// snapshot that claims a higher one was not written by a writer of this store: it is damage
    /// (format-spec.md, "Sequence numbers"), and every number derived from a sequence (`+ 1`,
    /// `− 1`) stays far from overflow.
    package static let maximumSequence: UInt64 = (1 << 56) - 1

    /// Whether `sequence` is one a writer of a store could have issued (``maximumSequence``).
    @inline(__always)
    package static func isPlausibleSequence(_ sequence: UInt64) -> Bool { sequence <= maximumSequence }

    /// Longest key, in UTF-8 bytes.
    package static let maximumKeyLength = 1024
    /// Largest value the format can hold (bytes); LZ4's own input limit is a little above it.
    package static let maximumValueLength = 1 << 30

    package enum RecordKind: UInt8 {
        case value = 1
        case tombstone = 2
        /// Sets or clears the pinned flag of a value record (format version 2): no value; the
        /// expiry field holds the sequence number of the value record it modifies.
        case pin = 3
        /// Removes every value record written before it (a lower sequence number) whose key
        /// starts with the record's key field, the prefix (format version 5): no value, flags 0,
        /// expiry 0.
        case removal = 4
    }

    package enum RecordFlag {
        package static let compressed: UInt8 = 1 << 0
        package static let pinned: UInt8 = 1 << 1
        /// The value starts with an ``EntryHeader`` (format version 4): a cache entry with a
        /// fresh period and a stale window.
        package static let entry: UInt8 = 1 << 2
        /// Format version 6. On a cache entry: its ``EntryHeader`` lists tags (header version
        /// 2). On a removal record: its key field is a tag, and it removes the older cache
        /// entries that list it (instead of the keys under a prefix).
        package static let tagged: UInt8 = 1 << 3
        /// Format version 7, value records only: the stored value is sealed (AES-256-GCM, key id
        /// and nonce in front, tag behind; ``Seal``).
        package static let sealed: UInt8 = 1 << 4
        package static let known: UInt8 = compressed | pinned | entry | tagged | sealed
    }

    package enum SegmentKind: UInt8 {
        /// Written by puts and removes, in sequence order.
        case log = 1
        /// Written by compaction: live records of older segments, in sequence order.
        case compacted = 2
    }

    package enum SegmentFlag {
        /// Every segment with a lower id is dead (written by `removeAll`).
        package static let clearsOlder: UInt8 = 1 << 0
        package static let known: UInt8 = clearsOlder
    }
}
