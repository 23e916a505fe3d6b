/// The fixed part of a record, as decoded from disk. Layout: format-spec.md, "Record".
package struct RecordHeader: Sendable {
    package var sequence: UInt64
    /// Milliseconds since the Unix epoch.
    package var writeTime: Int64
    /// Milliseconds since the Unix epoch; 0 means the record never expires.
    package var expiry: Int64
    package var kind: Format.RecordKind
    package var flags: UInt8
    package var keyLength: Int
    package var storedLength: Int
    package var originalLength: Int

    package init(sequence: UInt64, writeTime: Int64, expiry: Int64, kind: Format.RecordKind, flags: UInt8, keyLength: Int, storedLength: Int, originalLength: Int) {
        self.sequence = sequence
        self.writeTime = writeTime
        self.expiry = expiry
        self.kind = kind
        self.flags = flags
        self.keyLength = keyLength
        self.storedLength = storedLength
        self.originalLength = originalLength
    }

    package var isCompressed: Bool { flags & Format.RecordFlag.compressed != 0 }
    package var isPinned: Bool { flags & Format.RecordFlag.pinned != 0 }
    /// The value starts with an ``EntryHeader``.
    package var isEntry: Bool { flags & Format.RecordFlag.entry != 0 }
    /// A cache entry whose header lists tags, or a removal record of a tag (format version 6).
    package var isTagged: Bool { flags & Format.RecordFlag.tagged != 0 }
    package var isTombstone: Bool { kind == .tombstone }
    package var isPin: Bool { kind == .pin }
    /// A removal record: its key field is the prefix of the keys whose older records it removes.
    package var isRemoval: Bool { kind == .removal }
    /// The stored value is sealed (format version 7): key id, nonce, ciphertext, tag.
    package var isSealed: Bool { flags & Format.RecordFlag.sealed != 0 }
    /// The length of what the seal holds: the stored length without key id, nonce and tag.
    package var unsealedLength: Int { isSealed ? storedLength - Format.Seal.overhead : storedLength }
    /// A pin record: the sequence number of the value record whose pinned flag it sets.
    package var pinTarget: UInt64 { UInt64(bitPattern: expiry) }
    /// Header, key and stored value, in bytes.
    package var encodedSize: Int { Format.recordHeaderSize + keyLength + storedLength }
}

/// Encodes and validates records. Pure functions over caller-owned buffers: no allocation.
package enum RecordCodec {
    package enum Decoded {
        /// A record whose header is sane and whose checksum matches.
        case record(RecordHeader)
        /// Fewer bytes remain than the header or the record it describes needs.
        case truncated
        /// The bytes are not a valid record (the reason is for reports).
        case invalid(String)
    }

    /// Bytes a record with these lengths occupies on disk.
    @inline(__always)
    package static func encodedSize(keyLength: Int, storedLength: Int) -> Int {
        Format.recordHeaderSize + keyLength + storedLength
    }

    /// Writes a complete record at the start of `out`, which must hold `encodedSize` bytes.
    /// The key and stored value are copied in; the checksum covers everything after itself.
    @inline(__always)
    package static func encode(
        _ header: RecordHeader,
        key: UnsafeRawBufferPointer,
        value: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(value.count == header.storedLength)
        encode(header, key: key, into: out) { stored in
            if value.count > 0 { stored.baseAddress!.copyMemory(from: value.baseAddress!, byteCount: value.count) }
        }
    }

    /// Writes a complete record at the start of `out`, which must hold `encodedSize` bytes,
    /// with `writeValue` filling in its stored value (all `storedLength` bytes) once the header
    /// and the key are in place (a seal reads them as its associated data).
    @inline(__always)
    package static func encode(
        _ header: RecordHeader,
        key: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer,
        writeValue: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        precondition(key.count == header.keyLength)
        precondition(out.count >= header.encodedSize)
        out.put(header.sequence, at: 4)
        out.put(header.writeTime, at: 12)
        out.put(header.expiry, at: 20)
        out.put(header.kind.rawValue, at: 28)
        out.put(header.flags, at: 29)
        out.put(UInt16(header.keyLength), at: Format.recordKeyLengthOffset)
        out.put(UInt32(header.storedLength), at: 32)
        out.put(UInt32(header.originalLength), at: 36)
        let base = out.baseAddress!
        if key.count > 0 { (base + Format.recordHeaderSize).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        writeValue(UnsafeMutableRawBufferPointer(start: base + Format.recordHeaderSize + key.count, count: header.storedLength))
        let covered = UnsafeRawBufferPointer(start: base + 4, count: header.encodedSize - 4)
        out.put(CRC32C.mask(CRC32C.checksum(covered)), at: 0)
    }

    /// Decodes and verifies the record starting at `offset` in `bytes`.
    ///
    /// Every length is checked against the format's limits before it is trusted, and the checksum
    /// is checked before anything (the key, the value) is used.
    package static func decode(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Decoded {
        let decoded = decodeHeader(bytes, at: offset)
        guard case .record(let header) = decoded else { return decoded }
        let total = header.encodedSize
        if bytes.count - offset < total { return .truncated }
        let covered = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + total)])
        if CRC32C.mask(CRC32C.checksum(covered)) != bytes.u32(offset) { return .invalid("checksum mismatch") }
        return decoded
    }

    /// Decodes the header starting at `offset` and checks its fields against each other and the
    /// format's limits, but not the checksum, which covers the whole record: for reading what a
    /// record's header says (its write time, its original length) without reading its value.
    package static func decodeHeader(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Decoded {
        let remaining = bytes.count - offset
        if remaining < Format.recordHeaderSize { return .truncated }
        let h = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Format.recordHeaderSize)])
        guard let kind = Format.RecordKind(rawValue: h.u8(28)) else { return .invalid("unknown record kind \(h.u8(28))") }
        let flags = h.u8(29)
        if flags & ~Format.RecordFlag.known != 0 { return .invalid("unknown flag bits \(flags)") }
        let keyLength = Int(h.u16(Format.recordKeyLengthOffset))
        let stored = Int(h.u32(32))
        let original = Int(h.u32(36))
        if keyLength == 0 || keyLength > Format.maximumKeyLength { return .invalid("key length \(keyLength) out of range") }
        if stored > Format.maximumValueLength || original > Format.maximumValueLength {
            return .invalid("value length out of range")
        }
        if let problem = kindProblem(kind, flags: flags, stored: stored, original: original) { return .invalid(problem) }
        if kind == .removal && h.i64(20) != 0 { return .invalid("removal record with an expiry") }
        if !Format.isPlausibleSequence(h.u64(4)) { return .invalid("sequence number \(h.u64(4)) out of range") }
        if (kind == .tombstone || kind == .pin) && !Format.isPlausibleSequence(h.u64(20)) {
            return .invalid("names sequence number \(h.u64(20)), out of range")
        }
        return .record(RecordHeader(
            sequence: h.u64(4), writeTime: h.i64(12), expiry: h.i64(20), kind: kind, flags: flags,
            keyLength: keyLength, storedLength: stored, originalLength: original))
    }

    /// What is wrong with a header's flags and lengths for its kind, or nil.
    private static func kindProblem(_ kind: Format.RecordKind, flags: UInt8, stored: Int, original: Int) -> String? {
        switch kind {
        case .tombstone:
            if stored != 0 || original != 0 || flags != 0 { return "tombstone with a value or flags" }
        case .pin:
            // Sealed (format version 7): an empty plaintext, so the seal's 32 bytes alone.
            let sealed = flags & Format.RecordFlag.sealed != 0
            if stored != (sealed ? Format.Seal.overhead : 0) || original != 0
                || flags & ~(Format.RecordFlag.pinned | Format.RecordFlag.sealed) != 0 {
                return "pin record with a value or flags other than pinned and sealed"
            }
        case .removal:
            if stored != 0 || original != 0 || flags & ~Format.RecordFlag.tagged != 0 { return "removal record with a value or flags" }
        case .value:
            let compressed = flags & Format.RecordFlag.compressed != 0
            let overhead = flags & Format.RecordFlag.sealed != 0 ? Format.Seal.overhead : 0
            if compressed ? (stored <= overhead || original == 0) : (stored != original + overhead) {
                return "stored and original lengths disagree"
            }
            if flags & Format.RecordFlag.entry != 0 && original < EntryHeader.size {
                return "cache entry shorter than its header"
            }
            if flags & Format.RecordFlag.tagged != 0 && (flags & Format.RecordFlag.entry == 0 || original < EntryHeader.taggedMinimumSize) {
                return "tagged value that is not a cache entry with tags"
            }
        }
        return nil
    }
}
