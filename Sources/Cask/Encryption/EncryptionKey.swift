/// A key for encryption at rest (``StoreEncryption``): exactly 32 bytes (256 bits), used with
/// AES-256-GCM, on every platform.
///
/// Make one from bytes the app keeps outside the store (a secrets manager, the Keychain, a file
/// only the service's user can read), or a new random one:
///
/// ```swift
/// import Cask
/// import Foundation
///
/// func storeKey(from keyFile: String) throws -> EncryptionKey {
///     // 32 bytes (`openssl rand 32 > key`); any other length throws, naming it.
///     try EncryptionKey(bytes: try Data(contentsOf: URL(fileURLWithPath: keyFile)))
/// }
///
/// let fresh = EncryptionKey()   // 32 bytes from the system's CSPRNG
/// let bytes = fresh.withUnsafeBytes { Array($0) }   // to keep it somewhere safe
/// ```
///
/// On Apple platforms `EncryptionKey(_:)` also takes a CryptoKit `SymmetricKey`.
///
/// The bytes live in memory the key owns, which is overwritten with zeros when the last copy of
/// the key is released (best effort: copies the app made itself are the app's). Printing a key
/// shows its key id (``StoreEncryption/keyID(of:)``), never its bytes.
///
/// Thread-safety: an immutable value; `Sendable`.
public struct EncryptionKey: Sendable {
    /// The size of every key, in bytes: 32 (AES-256).
    public static let byteCount = 32

    private let storage: KeyBytes

    /// A key made of `bytes`, which must be exactly 32 bytes long (raw bytes: a key written as
    /// 64 hex digits must be decoded first).
    ///
    /// - Throws: ``CaskError/invalidOption(_:)`` naming the length when `bytes` is not 32 bytes
    ///   long: a truncated or padded key file, a hex or Base64 text read as raw bytes, or a key
    ///   of another size (AES-128's 16 bytes).
    public init<Bytes: Sequence>(bytes: Bytes) throws(CaskError) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        guard array.count == Self.byteCount else {
            throw .invalidOption("an encryption key is \(Self.byteCount) bytes (AES-256), not \(array.count): "
                                 + "give the key's raw bytes (`openssl rand 32 > key` makes one; decode a hex or Base64 key first), or make one with EncryptionKey()")
        }
        storage = KeyBytes(array)
    }

    /// A new random key: 32 bytes from the system's cryptographically secure random number
    /// generator (`SystemRandomNumberGenerator`: `getrandom(2)` on Linux, `arc4random_buf` on
    /// Apple platforms). Never fails. Keep its bytes (``withUnsafeBytes(_:)``) where the app
    /// will find them again: a store sealed with a key that is lost cannot be read.
    public init() {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: Self.byteCount)
        for i in bytes.indices { bytes[i] = UInt8.random(in: .min ... .max, using: &generator) }
        storage = KeyBytes(bytes)
        for i in bytes.indices { bytes[i] = 0 }
    }

    /// A key made of the 32 bytes of a digest (a derived key, ``Keyring/fileSealKey(of:)``).
    init(digest: [UInt8]) {
        precondition(digest.count == Self.byteCount, "an HMAC-SHA256 is 32 bytes")
        storage = KeyBytes(digest)
    }

    /// Calls `body` with the key's 32 bytes and returns what it returns. The pointer is valid
    /// only during the call: do not keep it or let it escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage.bytes))
    }

    /// HMAC-SHA256 of `label`'s UTF-8 bytes under this key (how Cask derives a key id and the
    /// file-seal key from a key: format-spec.md, "Sealed records", "File seals").
    func authenticationCode(for label: String) -> [UInt8] {
        let message = Array(label.utf8)
        return message.withUnsafeBytes { m in withUnsafeBytes { k in Digest.hmacSHA256(m, key: k) } }
    }
}

extension EncryptionKey: CustomStringConvertible, CustomDebugStringConvertible {
    /// The key's id, never its bytes: `EncryptionKey(id 1a2b3c4d)`.
    public var description: String { "EncryptionKey(id \(StoreEncryption.keyIDText(StoreEncryption.keyID(of: self))))" }
    public var debugDescription: String { description }
}

/// The 32 bytes of a key, in memory of their own that is zeroed on release. Unchecked
/// `Sendable`: the bytes are written once, in `init`, and only read after.
private final class KeyBytes: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer

    init(_ source: [UInt8]) {
        bytes = .allocate(byteCount: source.count, alignment: 16)
        bytes.copyBytes(from: source)
    }

    deinit {
        // Best effort, as swift-crypto's `SymmetricKey` does: the key does not outlive its owner
        // in freed memory.
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        bytes.deallocate()
    }
}
