import CaskFormat

/// The checks an open (and `cask verify`) makes on each segment header before anything else
/// (format-spec.md, "Sealed records", "Keys at open"): a sealed segment needs its key in the
/// keyring, and an encrypted store holds no unsealed segment with records. A refusal changes
/// nothing.
enum EncryptionCheck {
    /// Throws unless every segment of `loaded` with an intact header can be read with `keyring`
    /// (a damaged header names no key: its records are checked as they are read).
    static func check(_ loaded: [StoreLoader.Loaded], keyring: Keyring?) throws(CaskError) {
        for segment in loaded {
            if let header = segment.header { try check(header, size: segment.size, path: segment.file.path, keyring: keyring) }
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
