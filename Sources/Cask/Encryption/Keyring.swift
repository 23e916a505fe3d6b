import CaskFormat
import Crypto
import Foundation

/// The keys one open of a store may open sealed values with, by key id, and the one it seals
/// with (format-spec.md, "Sealed records"). Immutable and `Sendable`: readers share it without
/// a lock.
struct Keyring: Sendable {
    let currentID: UInt32
    private let keys: [UInt32: SymmetricKey]

    init(_ encryption: StoreEncryption) {
        currentID = encryption.currentKeyID
        var keys: [UInt32: SymmetricKey] = [:]
        for key in [encryption.currentKey] + encryption.previousKeys { keys[StoreEncryption.keyID(of: key)] = key }
        self.keys = keys
    }

    var currentKey: SymmetricKey { keys[currentID]! }
    var ids: [UInt32] { [currentID] + keys.keys.filter { $0 != currentID }.sorted() }
    func contains(_ id: UInt32) -> Bool { keys[id] != nil }

    /// Calls `body` with the plaintext of the sealed value `stored` (key id, nonce, ciphertext,
    /// tag) authenticated with `associated`; nil, without calling it, when its key is not in the
    /// ring or it fails authentication (damage: the bytes were read and passed their checksum).
    func open<R>(_ stored: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard stored.count >= Format.Seal.overhead, let key = keys[stored.u32(0)] else { return nil }
        let tagStart = stored.count - Format.Seal.tagSize
        let plaintext: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: UnsafeRawBufferPointer(rebasing: stored[Format.Seal.keyIDSize..<Format.Seal.prefixSize])),
                ciphertext: UnsafeRawBufferPointer(rebasing: stored[Format.Seal.prefixSize..<tagStart]),
                tag: UnsafeRawBufferPointer(rebasing: stored[tagStart...]))
            plaintext = try AES.GCM.open(box, using: key, authenticating: associated)
        } catch {
            return nil
        }
        return plaintext.withUnsafeBytes(body)
    }
}

extension RecordHeader {
    /// The associated data of a sealed record (format-spec.md, "Sealed records"): record bytes
    /// `4 ..< 40 + keyLength + 4` of `record`, which starts with this header: every field after
    /// the checksum, the key and the key id.
    static func sealedAssociatedData(_ record: UnsafeRawBufferPointer, keyLength: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: record[4..<(Format.recordHeaderSize + keyLength + Format.Seal.keyIDSize)])
    }
}
