import CaskFormat

/// The one place a value becomes the bytes its record stores, and back (format-spec.md,
/// "Record" and "Entry header"): a cache entry's header (its fresh period and tags) goes in
/// front of the app's bytes, then the whole is LZ4-compressed when the ``CompressionPolicy``
/// asks for it and it saves enough. Writes, reads and `cask verify` all go through it; a
/// sealed value is opened here (``Keyring``) and sealed as it is appended (``RecordSealer``). Pure functions over caller-owned buffers; no I/O.
enum ValueCodec {
    /// Calls `body` with what a record stores for `value` (with `entry`'s header in front when
    /// it is a cache entry, compressed per `policy`), the record flags that says so
    /// (compressed, entry, tagged) and the original length (header included).
    static func encode<R>(_ value: UnsafeRawBufferPointer, entry: EntryHeader?, policy: CompressionPolicy,
                          _ body: (_ stored: UnsafeRawBufferPointer, _ flags: UInt8, _ originalLength: Int) throws(CaskError) -> R) throws(CaskError) -> R {
        guard let entry else { return try compressed(value, flags: 0, policy: policy, body) }
        let headerSize = entry.encodedSize
        let flags = Format.RecordFlag.entry | (entry.tags.isEmpty ? 0 : Format.RecordFlag.tagged)
        return try withUnsafeTemporaryAllocation(byteCount: headerSize + value.count, alignment: 8) { out throws(CaskError) -> R in
            entry.encode(into: out)
            if value.count > 0 { (out.baseAddress! + headerSize).copyMemory(from: value.baseAddress!, byteCount: value.count) }
            return try compressed(UnsafeRawBufferPointer(out), flags: flags, policy: policy, body)
        }
    }

    private static func compressed<R>(_ original: UnsafeRawBufferPointer, flags: UInt8, policy: CompressionPolicy,
                                      _ body: (UnsafeRawBufferPointer, UInt8, Int) throws(CaskError) -> R) throws(CaskError) -> R {
        guard let lz4 = compress(original, policy: policy) else { return try body(original, flags, original.count) }
        let result: Result<R, CaskError> = lz4.withUnsafeBytes { stored in
            Result { () throws(CaskError) in try body(stored, flags | Format.RecordFlag.compressed, original.count) }
        }
        return try result.get()
    }

    /// Calls `body` with the app's bytes of `record` (a checksummed value record whose header
    /// is `h`), and its entry header (nil for a plain value); nil, without calling it, when the
    /// bytes are not what the header says (a seal that does not open under `keyring`, a sealed
    /// record without a keyring or an unsealed one with, an LZ4 block that does not decode to
    /// the original length, an entry header that is not one or disagrees with the tagged
    /// flag): damage, since the bytes were read. `segment` is the id of the segment the record
    /// lies in (it decides whether the seal binds the store, format version 8).
    static func decode<R>(_ record: UnsafeRawBufferPointer, of h: RecordHeader, keyring: Keyring?, segment: UInt32,
                          _ body: (UnsafeRawBufferPointer, EntryHeader?) -> R) -> R? {
        let stored = UnsafeRawBufferPointer(rebasing: record[(Format.recordHeaderSize + h.keyLength)...])
        guard h.isSealed || keyring != nil else {
            return withOriginal(stored, of: h) { original in original.flatMap { split($0, of: h, body) } }
        }
        guard h.isSealed, let keyring else { return nil }
        return keyring.openRecord(record, keyLength: h.keyLength, segment: segment) { plaintext in
            withOriginal(plaintext, of: h) { original in original.flatMap { split($0, of: h, body) } }
        } ?? nil
    }

    /// What is wrong with the stored bytes of `record` (a checksummed record whose header is
    /// `h`) under `keyring` (for `cask verify`), or nil when they decode.
    static func problem(_ record: UnsafeRawBufferPointer, of h: RecordHeader, keyring: Keyring?, segment: UInt32) -> String? {
        guard h.kind == .value else { return nil }
        let stored = UnsafeRawBufferPointer(rebasing: record[(Format.recordHeaderSize + h.keyLength)...])
        switch (h.isSealed, keyring) {
        case (false, nil):
            return plainProblem(stored, of: h)
        case (true, nil):
            return "sealed value, and no encryption key was given"
        case (false, _?):
            return "unsealed value in an encrypted store"
        case (true, let keyring?):
            guard keyring.contains(stored.u32(0)) else { return "sealed with key id \(CaskError.hex(stored.u32(0))), which is not among the keys given" }
            return keyring.openRecord(record, keyLength: h.keyLength, segment: segment) { plainProblem($0, of: h) }
                ?? "sealed value fails authentication (changed bytes, moved from another record, or from another store)"
        }
    }

    /// What is wrong with an unsealed stored value (or a sealed one's plaintext), or nil.
    private static func plainProblem(_ stored: UnsafeRawBufferPointer, of h: RecordHeader) -> String? {
        guard h.isCompressed || h.isEntry else { return nil }
        return withOriginal(stored, of: h) { original -> String? in
            guard let original else { return "LZ4 block does not decode to \(h.originalLength) bytes" }
            guard h.isEntry else { return nil }
            guard let header = EntryHeader.decode(original) else { return "cache entry header is not valid" }
            return header.matches(taggedFlag: h.isTagged) ? nil : "cache entry header's tags disagree with the record's tagged flag"
        }
    }

    /// Calls `body` with the original bytes of a record (decompressed into a temporary buffer,
    /// on the stack when it fits: no malloc and free per read), or nil when they do not decode.
    @inline(__always)
    private static func withOriginal<R>(_ stored: UnsafeRawBufferPointer, of h: RecordHeader, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        guard h.isCompressed else { return body(stored) }
        return withUnsafeTemporaryAllocation(byteCount: h.originalLength, alignment: 16) { out in
            body(LZ4.decompress(stored, into: out) ? UnsafeRawBufferPointer(out) : nil)
        }
    }

    /// A value's app bytes and entry header: a cache entry's without its header (nil when the
    /// header is not one, or its tags disagree with the record's flag), a plain value as it is.
    @inline(__always)
    private static func split<R>(_ value: UnsafeRawBufferPointer, of h: RecordHeader, _ body: (UnsafeRawBufferPointer, EntryHeader?) -> R) -> R? {
        guard h.isEntry else { return body(value, nil) }
        guard let header = EntryHeader.decode(value), header.matches(taggedFlag: h.isTagged) else { return nil }
        return body(UnsafeRawBufferPointer(rebasing: value[header.encodedSize...]), header)
    }

    /// The LZ4 form of `value` when `policy` asks for it and it saves enough (automatic: at
    /// least 1/16); nil to store it as is.
    static func compress(_ value: UnsafeRawBufferPointer, policy: CompressionPolicy) -> [UInt8]? {
        let keepBelow: Int
        switch policy {
        case .never:
            return nil
        case .automatic(let minimumSize):
            guard value.count >= max(1, minimumSize) else { return nil }
            keepBelow = value.count - value.count / 16
        case .always:
            guard value.count > 0 else { return nil }
            keepBelow = value.count
        }
        let bound = LZ4.bound(value.count)
        var size = 0
        let out = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            size = LZ4.compress(value, into: UnsafeMutableRawBufferPointer(buffer))
            count = size
        }
        return size > 0 && size < keepBelow ? out : nil
    }
}
