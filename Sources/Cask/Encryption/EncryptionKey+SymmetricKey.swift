// On Apple platforms Cask seals with swift-crypto (CryptoKit), and takes its keys too. On Linux
// Cask seals with the system libcrypto (CLibCrypto) and depends on no other crypto library, so
// this initialiser does not exist there: use `EncryptionKey(bytes:)`.
#if !canImport(CLibCrypto)
import Crypto

extension EncryptionKey {
    /// A key with the bytes of `key`, a CryptoKit (or swift-crypto) key of 256 bits:
    /// `SymmetricKey(size: .bits256)`, or one from the Keychain.
    ///
    /// - Throws: ``CaskError/invalidOption(_:)`` when `key` is not 256 bits, naming its size.
    public init(_ key: SymmetricKey) throws(CaskError) {
        try self.init(bytes: key.withUnsafeBytes { Array($0) })
    }
}
#endif
