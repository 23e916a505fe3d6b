import CaskFormat

/// Key rotation in compaction (format-spec.md, "Sealed records", "Rotation"): a sealed record
/// under a previous key, or sealed before the store had an id (version 7, "Store id"), is
/// opened and sealed again under the current key and the store binding, with a fresh nonce
/// and the same header, as the pass copies it. One per pass, used by the compaction thread.
struct Resealer {
    private let keyring: Keyring
    private var sealer: RecordSealer

    init(keyring: Keyring) {
        self.keyring = keyring
        sealer = RecordSealer(keyring: keyring)
    }

    /// Appends `record` (whose header is `header`, read from segment `segment`) to `writer`
    /// sealed under the current key and the store binding, and returns its offset; nil when it
    /// is to be copied unchanged: not sealed, already under the current key and bound, or not
    /// opening (damage stays damage, found as such when it is read).
    mutating func reseal(_ record: UnsafeRawBufferPointer, header: RecordHeader, from segment: UInt32, to writer: inout SegmentWriter,
                         accessTime: Int64) throws(CaskError) -> Int64? {
        guard header.isSealed else { return nil }
        let storedStart = Format.recordHeaderSize + header.keyLength
        let stored = UnsafeRawBufferPointer(rebasing: record[storedStart...])
        let legacy = keyring.binding?.isLegacy(segment: segment) ?? false
        guard stored.count >= Format.Seal.overhead, stored.u32(0) != keyring.currentID || legacy else { return nil }
        let key = UnsafeRawBufferPointer(rebasing: record[Format.recordHeaderSize..<storedStart])
        let opened: Result<Int64, CaskError>? = keyring.openRecord(record, keyLength: header.keyLength, segment: segment) { plaintext in
            Result { () throws(CaskError) in try writer.append(header, key: key, sealing: plaintext, with: &sealer, accessTime: accessTime) }
        }
        return try opened?.get()
    }
}
