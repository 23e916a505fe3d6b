// Where Cask seals with swift-crypto (Apple platforms), it takes CryptoKit keys too.
#if !canImport(CLibCrypto)
import Crypto
import Testing
@testable import Cask

@Suite struct EncryptionKeySymmetricKeyTests {
    @Test func aSymmetricKeyOf256BitsGivesTheSameKey() throws {
        let key = try EncryptionKey(SymmetricKey(data: testKeyBytes(1)))
        #expect(key.withUnsafeBytes { Array($0) } == testKeyBytes(1))
        #expect(StoreEncryption.keyID(of: key) == StoreEncryption.keyID(of: testKey(1)))
    }

    @Test func aSymmetricKeyOfAnotherSizeIsRefused() {
        #expect(throws: CaskError.self) { try EncryptionKey(SymmetricKey(size: .bits128)) }
    }
}
#endif
