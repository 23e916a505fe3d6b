import CaskFormat

/// The keys one open of a store may open sealed values with, by key id, and the one it seals
/// with (format-spec.md, "Sealed records"). Immutable and `Sendable`: readers share it without
/// a lock.
struct Keyring: Sendable {
    let currentID: UInt32
    private let keys: [UInt32: AESGCMKey]
    /// The file-seal key derived from each key, by the key's id (``FileSealer``).
    private let fileSealKeys: [UInt32: AESGCMKey]
    /// What every seal binds besides its record or file (format version 8, "Store id"); nil
    /// until the open has read the store's id, and for a version-7 store opened read-only.
    private(set) var binding: StoreBinding?

    init(_ encryption: StoreEncryption) {
        currentID = encryption.currentKeyID
        var keys: [UInt32: AESGCMKey] = [:]
        var fileSealKeys: [UInt32: AESGCMKey] = [:]
        for key in [encryption.currentKey] + encryption.previousKeys {
            let id = StoreEncryption.keyID(of: key)
            keys[id] = AESGCMKey(key)
            fileSealKeys[id] = AESGCMKey(Self.fileSealKey(of: key))
        }
        self.keys = keys
        self.fileSealKeys = fileSealKeys
    }

    /// This keyring with its seals bound to `binding` (the store's, read at open).
    func bound(to binding: StoreBinding?) -> Keyring {
        var copy = self
        copy.binding = binding
        return copy
    }

    var currentKey: AESGCMKey { keys[currentID]! }
    var currentFileSealKey: AESGCMKey { fileSealKeys[currentID]! }
    func fileSealKey(_ id: UInt32) -> AESGCMKey? { fileSealKeys[id] }

    /// The key that seals hint files and the index snapshot under `key` (format-spec.md, "File
    /// seals"): HMAC-SHA256(key, "cask file seal"), so that no nonce of a record's seal is ever
    /// used with it.
    static func fileSealKey(of key: EncryptionKey) -> EncryptionKey {
        EncryptionKey(digest: key.authenticationCode(for: "cask file seal"))
    }
    var ids: [UInt32] { [currentID] + keys.keys.filter { $0 != currentID }.sorted() }
    func contains(_ id: UInt32) -> Bool { keys[id] != nil }

    /// Calls `body` with the plaintext of the sealed value `stored` (key id, nonce, ciphertext,
    /// tag) authenticated with `associated`; nil, without calling it, when its key is not in the
    /// ring or it fails authentication (damage: the bytes were read and passed their checksum).
    func open<R>(_ stored: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard stored.count >= Format.Seal.overhead, let key = keys[stored.u32(0)] else { return nil }
        let tagStart = stored.count - Format.Seal.tagSize
        let ciphertext = UnsafeRawBufferPointer(rebasing: stored[Format.Seal.prefixSize..<tagStart])
        // On the stack when it fits, like a decompression: no malloc and free per read.
        return withUnsafeTemporaryAllocation(byteCount: max(ciphertext.count, 1), alignment: 16) { out -> R? in
            let plaintext = UnsafeMutableRawBufferPointer(rebasing: out[..<ciphertext.count])
            guard key.open(ciphertext, tag: UnsafeRawBufferPointer(rebasing: stored[tagStart...]),
                           nonce: UnsafeRawBufferPointer(rebasing: stored[Format.Seal.keyIDSize..<Format.Seal.prefixSize]),
                           associated: associated, into: plaintext) else { return nil }
            return body(UnsafeRawBufferPointer(plaintext))
        }
    }
}

extension Keyring {
    /// Whether the record at `offset` of `segment` (segment `id`, whose header is `header`,
    /// already checked against the format's rules and its checksum) is sealed under a key of the
    /// ring and its seal holds. Scans use it for pin records (format-spec.md, "Sealed records"),
    /// whose plaintext is empty: open applies no pin record that fails it.
    func authenticates(_ header: RecordHeader, in segment: UnsafeRawBufferPointer, at offset: Int, segmentID id: UInt32) -> Bool {
        guard header.isSealed else { return false }
        let record = UnsafeRawBufferPointer(rebasing: segment[offset..<(offset + header.encodedSize)])
        return openRecord(record, keyLength: header.keyLength, segment: id) { _ in true } ?? false
    }

    /// Calls `body` with the associated data of the sealed `record` (which starts with its
    /// header) of segment `segment` (format-spec.md, "Sealed records"): version 7's, followed by
    /// the store binding unless the store has none or the segment predates it.
    func withAssociatedData<R>(of record: UnsafeRawBufferPointer, keyLength: Int, segment: UInt32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let base = RecordHeader.sealedAssociatedData(record, keyLength: keyLength)
        guard let binding, !binding.isLegacy(segment: segment) else { return body(base) }
        return binding.appended(to: base, body)
    }

    /// ``open(_:associated:_:)`` of the sealed `record` of segment `segment`.
    func openRecord<R>(_ record: UnsafeRawBufferPointer, keyLength: Int, segment: UInt32, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        let stored = UnsafeRawBufferPointer(rebasing: record[(Format.recordHeaderSize + keyLength)...])
        return withAssociatedData(of: record, keyLength: keyLength, segment: segment) { open(stored, associated: $0, body) }
    }
}

extension RecordHeader {
    /// The associated data of a version-7 sealed record (format-spec.md, "Sealed records"):
    /// record bytes `4 ..< 40 + keyLength + 4` of `record`, which starts with this header: every
    /// field after the checksum, the key and the key id. Version 8 appends the store binding
    /// (``Keyring/withAssociatedData(of:keyLength:segment:_:)``).
    static func sealedAssociatedData(_ record: UnsafeRawBufferPointer, keyLength: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: record[4..<(Format.recordHeaderSize + keyLength + Format.Seal.keyIDSize)])
    }
}
