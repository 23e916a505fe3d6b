import CaskFormat

/// The checks an open (and `cask verify`) makes on each segment header before anything else
/// (format-spec.md, "Sealed records", "Keys at open"): a sealed segment needs its key in the
/// keyring, and an encrypted store holds no unsealed segment with records. A refusal changes
/// nothing.
enum EncryptionCheck {
    /// Throws unless every segment of `loaded` can be read with `keyring`: by its header, or
    /// when the header is damaged, by its first intact value record (reading the segment).
    static func check(_ loaded: [StoreLoader.Loaded], keyring: Keyring?) throws(CaskError) {
        for segment in loaded {
            if let header = segment.header {
                try check(header, size: segment.size, path: segment.file.path, keyring: keyring)
            } else {
                let bytes = try segment.file.fileSystem.readWholeFile(segment.file.handle)
                try bytes.withBytes { raw throws(CaskError) in try checkRecords(raw, path: segment.file.path, keyring: keyring) }
            }
        }
    }

    /// For a segment whose header is damaged (so names no key): its first intact value record
    /// decides instead. Sealed under a key `keyring` lacks (or with no keyring), or unsealed
    /// while `keyring` is set, it refuses as the header would have; otherwise every value of an
    /// encrypted store opened without its key would be taken for damage, and dropped by the
    /// first scrub or repair. A segment the scan cannot read as one (a garbled header with no
    /// magic: a torn new segment, or another program's file) is left to the open's own rules.
    static func checkRecords(_ raw: UnsafeRawBufferPointer, path: String, keyring: Keyring?) throws(CaskError) {
        var first: (header: RecordHeader, offset: Int)?
        do throws(SegmentScanner.Failure) {
            _ = try SegmentScanner.scan(raw) { h, offset in
                if first == nil && h.kind == .value { first = (h, offset) }
            }
        } catch {
            return   // bytes already in memory: no I/O failed; the scan at open decides what this file is
        }
        guard let (h, offset) = first else { return }
        if h.isSealed && h.storedLength >= Format.Seal.overhead {
            try requireKey(raw.u32(offset + Format.recordHeaderSize + h.keyLength), of: path, in: keyring)
        } else if keyring != nil && !h.isSealed {
            throw .unencryptedStore(path: path)
        }
    }

    /// Throws unless `header` (of the segment at `path`, `size` bytes) can be read with
    /// `keyring` (nil: encryption off).
    static func check(_ header: SegmentHeader, size: Int64, path: String, keyring: Keyring?) throws(CaskError) {
        try requireKey(header.keyID, of: path, in: keyring)
        if keyring != nil && header.keyID == 0 && size > Int64(Format.segmentHeaderSize) {
            throw .unencryptedStore(path: path)
        }
    }

    /// Throws unless `keyID` (a segment's: 0 when unsealed) is in `keyring`.
    static func requireKey(_ keyID: UInt32, of path: String, in keyring: Keyring?) throws(CaskError) {
        guard keyID != 0, !(keyring?.contains(keyID) ?? false) else { return }
        throw .encryptionKeyMissing(path: path, keyID: keyID, given: keyring?.ids ?? [])
    }
}
