import CaskFormat

/// Seals values under one key with nonces that do not repeat (format-spec.md, "Sealed
/// records"): 8 random bytes drawn when the sealer is made, then a 4-byte counter per record;
/// after 2^32 records it draws new random bytes. One sealer per writing open and per
/// compaction pass; each is used by one thread at a time (the log writer's under the store's
/// lock, a pass's by the compaction thread), so it is a value with no lock of its own.
struct RecordSealer: Sendable {
    let keyID: UInt32
    private let key: AESGCMKey
    private let context: AESGCMKey.SealingContext
    /// The store binding every seal binds (format version 8); nil only for a keyring without
    /// one, which writes version-7 seals (tests make version-7 stores with it).
    private let binding: StoreBinding?
    private var prefix: UInt64
    private var counter: UInt32 = 0

    init(keyring: Keyring) {
        keyID = keyring.currentID
        key = keyring.currentKey
        context = key.makeSealingContext()
        binding = keyring.binding
        prefix = UInt64.random(in: .min ... .max)
    }

    /// Seals `plaintext` into `out` (key id, nonce, ciphertext, tag: `plaintext.count` +
    /// ``Format/Seal/overhead`` bytes), authenticating `record`'s bytes `4 ..< 40 + keyLength`
    /// (already written), the key id and the store binding. `out` is the stored value inside
    /// `record`, which goes into a segment the binding covers (written after the store had it).
    mutating func seal(_ plaintext: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer,
                       record: UnsafeMutableRawBufferPointer, keyLength: Int) {
        precondition(out.count == plaintext.count + Format.Seal.overhead)
        out.put(keyID, at: 0)
        out.put(prefix, at: Format.Seal.keyIDSize)
        out.put(counter, at: Format.Seal.keyIDSize + 8)
        advance()
        let nonce = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[Format.Seal.keyIDSize..<Format.Seal.prefixSize])
        let base = RecordHeader.sealedAssociatedData(UnsafeRawBufferPointer(record), keyLength: keyLength)
        let body = out.baseAddress! + Format.Seal.prefixSize
        let (key, context) = (key, context)
        let seal = { (associated: UnsafeRawBufferPointer) in
            key.seal(plaintext, nonce: nonce, associated: associated,
                     ciphertext: UnsafeMutableRawBufferPointer(start: body, count: plaintext.count),
                     tag: UnsafeMutableRawBufferPointer(start: body + plaintext.count, count: Format.Seal.tagSize), with: context)
        }
        if let binding { binding.appended(to: base, seal) } else { seal(base) }
    }

    private mutating func advance() {
        if counter == .max {
            counter = 0
            prefix = UInt64.random(in: .min ... .max)
        } else {
            counter += 1
        }
    }
}
