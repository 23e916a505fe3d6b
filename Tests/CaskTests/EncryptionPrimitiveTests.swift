import Foundation
import Testing
@testable import Cask

/// The primitives under encryption at rest against published vectors: on Linux they are the
/// system libcrypto's, on Apple platforms swift-crypto's, and a store written on one must open
/// on the other (the committed fixtures check whole stores).
@Suite struct EncryptionPrimitiveTests {
    // RFC 4231, test cases 1, 2 and 6 (a key longer than SHA-256's block is hashed first).
    @Test(arguments: [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (hexDigits(Array("Jefe".utf8)), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (String(repeating: "aa", count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ])
    func hmacSHA256MatchesRFC4231(key: String, message: [UInt8], expected: String) throws {
        let key = try bytes(hex: key)
        let mac = message.withUnsafeBytes { m in key.withUnsafeBytes { k in Digest.hmacSHA256(m, key: k) } }
        #expect(hexDigits(mac) == expected)
    }

    // FIPS 180-4 examples ("abc") and the empty message.
    @Test func sha256MatchesKnownDigests() {
        #expect(hexDigits(Array("abc".utf8).withUnsafeBytes(Digest.sha256)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hexDigits([UInt8]().withUnsafeBytes(Digest.sha256)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// The GCM specification's test case 16 (McGrew and Viega): AES-256, a 12-byte IV,
    /// 60 bytes of plaintext and 20 of associated data.
    static let gcmKey = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
    static let gcmNonce = "cafebabefacedbaddecaf888"
    static let gcmAssociated = "feedfacedeadbeeffeedfacedeadbeefabaddad2"
    static let gcmPlaintext = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
    static let gcmCiphertext = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
    static let gcmTag = "76fc6ece0f4e1768cddf8853bb2d551b"

    @Test(arguments: [false, true])
    func aes256GCMSealsTheSpecificationVector(withOwnContext: Bool) throws {
        let key = AESGCMKey(try EncryptionKey(bytes: bytes(hex: Self.gcmKey)))
        let sealed = seal(try bytes(hex: Self.gcmPlaintext), under: key, nonce: try bytes(hex: Self.gcmNonce),
                          associated: try bytes(hex: Self.gcmAssociated), withOwnContext: withOwnContext)
        #expect(hexDigits(sealed.ciphertext) == Self.gcmCiphertext)
        #expect(hexDigits(sealed.tag) == Self.gcmTag)
    }

    @Test func aes256GCMOpensTheSpecificationVectorAndRefusesAChangedTag() throws {
        let key = AESGCMKey(try EncryptionKey(bytes: bytes(hex: Self.gcmKey)))
        let (nonce, associated) = (try bytes(hex: Self.gcmNonce), try bytes(hex: Self.gcmAssociated))
        let ciphertext = try bytes(hex: Self.gcmCiphertext)
        var tag = try bytes(hex: Self.gcmTag)
        let opened = open(ciphertext, tag: tag, under: key, nonce: nonce, associated: associated)
        #expect(opened.map(hexDigits) == Self.gcmPlaintext)
        tag[15] ^= 1
        #expect(open(ciphertext, tag: tag, under: key, nonce: nonce, associated: associated) == nil)
    }

    private func seal(_ plaintext: [UInt8], under key: AESGCMKey, nonce: [UInt8], associated: [UInt8],
                      withOwnContext: Bool) -> (ciphertext: [UInt8], tag: [UInt8]) {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count), tag = [UInt8](repeating: 0, count: 16)
        let context = key.makeSealingContext()
        plaintext.withUnsafeBytes { p in
            nonce.withUnsafeBytes { n in
                associated.withUnsafeBytes { a in
                    ciphertext.withUnsafeMutableBytes { c in
                        tag.withUnsafeMutableBytes { t in
                            if withOwnContext {
                                key.seal(p, nonce: n, associated: a, ciphertext: c, tag: t, with: context)
                            } else {
                                key.seal(p, nonce: n, associated: a, ciphertext: c, tag: t)
                            }
                        }
                    }
                }
            }
        }
        return (ciphertext, tag)
    }

    private func open(_ ciphertext: [UInt8], tag: [UInt8], under key: AESGCMKey, nonce: [UInt8], associated: [UInt8]) -> [UInt8]? {
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let opened = ciphertext.withUnsafeBytes { c in
            tag.withUnsafeBytes { t in
                nonce.withUnsafeBytes { n in
                    associated.withUnsafeBytes { a in plaintext.withUnsafeMutableBytes { key.open(c, tag: t, nonce: n, associated: a, into: $0) } }
                }
            }
        }
        return opened ? plaintext : nil
    }

    /// GMAC is AES-GCM with associated data only: the specification's test case 13 (zero key
    /// and IV, nothing at all) and case 16's associated data alone, fed in pieces.
    @Test func gmacMatchesAES256GCMWithNoPlaintext() throws {
        let zero = GMACStream(key: AESGCMKey(try EncryptionKey(bytes: [UInt8](repeating: 0, count: 32))), nonce: [UInt8](repeating: 0, count: 12))
        #expect(hexDigits(zero.finish()) == "530f8afbc74536b9a963b4f1c4cb738b")
        let stream = GMACStream(key: AESGCMKey(try EncryptionKey(bytes: bytes(hex: Self.gcmKey))), nonce: try bytes(hex: Self.gcmNonce))
        let associated = try bytes(hex: Self.gcmAssociated)
        associated[..<7].withUnsafeBytes { stream.update($0) }
        associated[7...].withUnsafeBytes { stream.update($0) }
        #expect(hexDigits(stream.finish()) == "9f6be07603c0b0bd1272854063e9c9ba")
    }

    /// The key id and the file-seal key are HMAC-SHA256 of fixed labels (format-spec.md):
    /// pinned here, computed independently (Python's `hmac`), so that no change of library
    /// changes what names a key on disk.
    @Test func keyIDAndFileSealKeyAreTheSpecifiedHMACs() {
        #expect(StoreEncryption.keyID(of: testKey(1)) == 0x2368_BA04)
        #expect(StoreEncryption.keyID(of: testKey(2)) == 0x39CB_D83D)
        #expect(Keyring.fileSealKey(of: testKey(1)).withUnsafeBytes(hexDigits) == "ac9522f4b55781d306221368fb1e028d8cf72f6fb21da2200a7f1e3cbe22ebec")
    }
}

@Suite struct EncryptionKeyTests {
    @Test(arguments: [0, 1, 16, 31, 33, 64])
    func keyOfAnotherLengthIsRefusedNamingIt(count: Int) {
        #expect {
            try EncryptionKey(bytes: [UInt8](repeating: 7, count: count))
        } throws: { error in
            guard case .invalidOption(let message) = error as? CaskError else { return false }
            return message.contains("32 bytes") && message.contains("not \(count)")
        }
    }

    @Test func keyHoldsItsBytes() throws {
        let bytes = testKeyBytes(9)
        #expect(try EncryptionKey(bytes: bytes).withUnsafeBytes { Array($0) } == bytes)
        #expect(try EncryptionKey(bytes: Data(bytes)).withUnsafeBytes { Array($0) } == bytes)
        #expect(StoreEncryption.keyID(of: try EncryptionKey(bytes: bytes)) == StoreEncryption.keyID(of: testKey(9)))
    }

    @Test func randomKeysAreNewEachTime() {
        let keys = (0..<8).map { _ in EncryptionKey().withUnsafeBytes { Array($0) } }
        #expect(keys.allSatisfy { $0.count == EncryptionKey.byteCount })
        #expect(Set(keys).count == keys.count)
    }

    @Test func printingAKeyShowsItsIDNotItsBytes() {
        let key = testKey(1)
        #expect("\(key)" == "EncryptionKey(id 2368ba04)")
        #expect(String(reflecting: key) == "EncryptionKey(id 2368ba04)")
        #expect(!"\(key)".contains(hexDigits(testKeyBytes(1)).prefix(8)))
    }
}

/// The bytes a string of hex digits spells.
func bytes(hex: String) throws -> [UInt8] {
    let digits = Array(hex.utf8)
    try #require(digits.count % 2 == 0)
    return try stride(from: 0, to: digits.count, by: 2).map { i in
        try #require(UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16))
    }
}
