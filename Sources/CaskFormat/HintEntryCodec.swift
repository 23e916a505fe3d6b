/// The hint entry of format version 3 (format-spec.md, "Hint entry"): a descriptor byte, then
/// LEB128 varints of what the previous entry does not already say, then the key. A record's
/// offset is not stored: records tile their segment, so each entry's record starts where the
/// previous one's ends (the first at the segment header's end).
///
/// A 100-byte value under a 16-byte key takes 21 bytes instead of version 2's 68.
package enum HintEntryCodec {
    /// Descriptor bits: kind in bits 0-1 (0 a removal record, format version 5; else the
    /// record kind), the record's flags in bits 2-3, then which optional fields follow; bit 7
    /// (format version 6) the record's ``Format/RecordFlag/tagged`` flag.
    package static let hasOriginalLength: UInt8 = 1 << 4
    package static let hasExpiry: UInt8 = 1 << 5
    package static let hasAccessTime: UInt8 = 1 << 6
    package static let tagged: UInt8 = 1 << 7

    /// The fewest bytes an entry takes (descriptor, four one-byte varints, a one-byte key).
    package static let minimumSize = 6

    /// What a tombstone's or pin's expiry field (a sequence number) and a value's expiry (a time)
    /// are stored relative to.
    @inline(__always)
    static func expiryBase(_ kind: Format.RecordKind, sequence: UInt64, writeTime: Int64) -> Int64 {
        kind == .value ? writeTime : Int64(bitPattern: sequence)
    }

    /// The descriptor's kind bits for a record kind (a removal, kind 4, is 0).
    @inline(__always)
    static func kindBits(_ kind: Format.RecordKind) -> UInt8 { kind == .removal ? 0 : kind.rawValue }

    /// The record kind of a descriptor's kind bits.
    @inline(__always)
    static func kind(ofBits bits: UInt8) -> Format.RecordKind { bits == 0 ? .removal : Format.RecordKind(rawValue: bits)! }

    @inline(__always)
    static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    @inline(__always)
    static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1) }
}

/// Appends version-3 hint entries; each is coded against the one before it.
package struct HintEntryEncoder: Sendable {
    private var previousSequence: UInt64 = 0
    private var previousWriteTime: Int64 = 0

    package init() {}

    /// Appends `e` (whose `offset` is not stored) and its key to `body`.
    package mutating func append(_ e: HintEntry, key: UnsafeRawBufferPointer, to body: inout [UInt8]) {
        var descriptor = HintEntryCodec.kindBits(e.kind) | (e.flags & 0b11) << 2
        if e.flags & Format.RecordFlag.tagged != 0 { descriptor |= HintEntryCodec.tagged }
        if e.originalLength != e.storedLength { descriptor |= HintEntryCodec.hasOriginalLength }
        if e.expiry != 0 { descriptor |= HintEntryCodec.hasExpiry }
        if e.accessTime != e.writeTime { descriptor |= HintEntryCodec.hasAccessTime }
        body.append(descriptor)
        Self.appendVarint(e.sequence &- previousSequence, to: &body)
        Self.appendVarint(HintEntryCodec.zigzag(e.writeTime &- previousWriteTime), to: &body)
        if e.expiry != 0 {
            let base = HintEntryCodec.expiryBase(e.kind, sequence: e.sequence, writeTime: e.writeTime)
            Self.appendVarint(HintEntryCodec.zigzag(e.expiry &- base), to: &body)
        }
        if e.accessTime != e.writeTime { Self.appendVarint(HintEntryCodec.zigzag(e.accessTime &- e.writeTime), to: &body) }
        Self.appendVarint(UInt64(e.keyLength), to: &body)
        Self.appendVarint(UInt64(e.storedLength), to: &body)
        if e.originalLength != e.storedLength { Self.appendVarint(UInt64(e.originalLength), to: &body) }
        body.appendBytes(key)
        previousSequence = e.sequence
        previousWriteTime = e.writeTime
    }

    @inline(__always)
    static func appendVarint(_ value: UInt64, to body: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            body.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        body.append(UInt8(v))
    }
}

/// Reads version-3 hint entries one after the other, checking each against the format's limits
/// and the segment's size; nil at the first entry that fails.
package struct HintEntryDecoder {
    private var previousSequence: UInt64 = 0
    private var previousWriteTime: Int64 = 0
    /// Where the next entry's record starts in the segment.
    package private(set) var nextOffset: UInt64

    package init(firstOffset: UInt64 = UInt64(Format.segmentHeaderSize)) { nextOffset = firstOffset }

    /// Decodes the entry at `o` in `bytes` (which ends where the entries end); returns it, where
    /// its key lies, and where the next entry starts.
    package mutating func next(_ bytes: UnsafeRawBufferPointer, at start: Int, segmentSize: UInt64) -> (entry: HintEntry, key: Range<Int>, end: Int)? {
        var o = start
        guard o < bytes.count else { return nil }
        let descriptor = bytes[o]
        o += 1
        let kind = HintEntryCodec.kind(ofBits: descriptor & 0b11)
        var flags = (descriptor >> 2) & 0b11
        if descriptor & HintEntryCodec.tagged != 0 {
            // A tagged value is a cache entry; a tagged removal removes a tag. No other kind is.
            guard kind == .value || kind == .removal else { return nil }
            flags |= kind == .value ? Format.RecordFlag.tagged | Format.RecordFlag.entry : Format.RecordFlag.tagged
        }
        guard let sequenceDelta = Self.varint(bytes, &o), let writeDelta = Self.varint(bytes, &o) else { return nil }
        let sequence = previousSequence &+ sequenceDelta
        guard Format.isPlausibleSequence(sequence), sequenceDelta <= Format.maximumSequence else { return nil }
        let writeTime = previousWriteTime &+ HintEntryCodec.unzigzag(writeDelta)
        var expiry: Int64 = 0
        if descriptor & HintEntryCodec.hasExpiry != 0 {
            guard let v = Self.varint(bytes, &o) else { return nil }
            expiry = HintEntryCodec.expiryBase(kind, sequence: sequence, writeTime: writeTime) &+ HintEntryCodec.unzigzag(v)
        }
        var accessTime = writeTime
        if descriptor & HintEntryCodec.hasAccessTime != 0 {
            guard let v = Self.varint(bytes, &o) else { return nil }
            accessTime = writeTime &+ HintEntryCodec.unzigzag(v)
        }
        guard let keyLength = Self.varint(bytes, &o), let storedLength = Self.varint(bytes, &o),
              (1...UInt64(Format.maximumKeyLength)) ~= keyLength, storedLength <= UInt64(Format.maximumValueLength) else { return nil }
        var originalLength = storedLength
        if descriptor & HintEntryCodec.hasOriginalLength != 0 {
            guard let v = Self.varint(bytes, &o), v <= UInt64(Format.maximumValueLength) else { return nil }
            originalLength = v
        }
        guard bytes.count - o >= Int(keyLength) else { return nil }
        let entry = HintEntry(
            sequence: sequence, offset: nextOffset, writeTime: writeTime, expiry: expiry, accessTime: accessTime,
            kind: kind, flags: flags, keyLength: Int(keyLength), storedLength: Int(storedLength), originalLength: Int(originalLength))
        guard nextOffset <= segmentSize, UInt64(entry.recordSize) <= segmentSize - nextOffset else { return nil }
        nextOffset += UInt64(entry.recordSize)
        previousSequence = sequence
        previousWriteTime = writeTime
        return (entry, o..<(o + Int(keyLength)), o + Int(keyLength))
    }

    /// A LEB128 varint of at most 10 bytes that fits 64 bits, advancing `o`; nil when it runs
    /// past the end or overflows.
    @inline(__always)
    static func varint(_ bytes: UnsafeRawBufferPointer, _ o: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while o < bytes.count {
            let b = bytes[o]
            o += 1
            if shift == 63 && b > 1 { return nil }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}
