/// Encryption at rest: the keys a store seals its values with (``StoreOptions/encryption``).
///
/// With encryption on, every value a store writes is sealed with AES-256-GCM under the
/// ``currentKey`` before it reaches the disk: the app's bytes, the cache entry header (fresh
/// period, tags), after compression. The seal is bound to the record (its key, sequence number,
/// expiry, flags and lengths), so a sealed value moved to another key, replayed with a newer
/// sequence number or given another expiry fails to open and is handled as damage, never
/// returned. Pin records are sealed too, and hint files and the index snapshot carry a seal
/// under a key derived from the store key: one that does not hold is not used. Keys, sizes and
/// times stay readable to whoever can read the files; someone who can write them can still
/// remove items, and so bring back an earlier genuine value (DocC "Security").
///
/// The keys are ``EncryptionKey`` values (32 bytes each) that come from the app (a secrets
/// manager, the Keychain, an environment the operator controls); Cask never writes them. Each key
/// is named on disk by its ``keyID(of:)``.
///
/// **Rotation.** Put the new key in ``currentKey`` and the old one in ``previousKeys``: new
/// records are sealed with the new key, and compaction re-seals the records under an old key
/// as it rewrites them (it picks such segments first). Once ``DiskStore/encryptionKeysInUse``
/// (or `cask stats`) no longer lists an old key's id, drop it.
///
/// **A lost key** cannot be recovered, and neither can the values sealed with it: the open is
/// refused (``CaskError/encryptionKeyMissing(path:keyID:given:)``) until the key is given or
/// the folder is removed. Nothing else is lost silently.
///
/// Thread-safety: a value type; `Sendable`.
public struct StoreEncryption: Sendable {
    /// The key new records are sealed with.
    public let currentKey: EncryptionKey
    /// Keys records may still be sealed with (rotation); they are only used to open.
    public let previousKeys: [EncryptionKey]

    /// Encryption with `currentKey`, able to open records sealed with any of `previousKeys`.
    /// (Every ``EncryptionKey`` is 256 bits: its initialiser checks the length.)
    ///
    /// - Throws: ``CaskError/invalidOption(_:)`` when two keys have the same key id (the same
    ///   key twice, or a 1-in-2^32 clash: make a new key).
    public init(currentKey: EncryptionKey, previousKeys: [EncryptionKey] = []) throws(CaskError) {
        let ids = ([currentKey] + previousKeys).map(Self.keyID(of:))
        guard Set(ids).count == ids.count else {
            throw .invalidOption("two encryption keys have the same key id (\(ids.map(CaskError.hex).joined(separator: ", "))): list each key once")
        }
        self.currentKey = currentKey
        self.previousKeys = previousKeys
    }

    /// The id that names `key` on disk (format-spec.md, "Sealed records"): the first 4 bytes of
    /// HMAC-SHA256(key, "cask key id"), little-endian, never 0. It tells keys apart without
    /// revealing them.
    public static func keyID(of key: EncryptionKey) -> UInt32 {
        let mac = key.authenticationCode(for: "cask key id")
        let id = mac.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian
        return id == 0 ? 1 : id
    }

    /// A key id as Cask prints it (errors, `cask stats`): 8 hex digits.
    public static func keyIDText(_ id: UInt32) -> String {
        let digits = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// The id of ``currentKey``.
    public var currentKeyID: UInt32 { Self.keyID(of: currentKey) }
    /// The ids of every key, the current one first.
    public var keyIDs: [UInt32] { ([currentKey] + previousKeys).map(Self.keyID(of:)) }
}
