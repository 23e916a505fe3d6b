#if canImport(CLibCrypto)
import CLibCrypto
#else
import Crypto
import Foundation
#endif

/// AES-256-GCM under one key, sealing and opening in place in caller-owned buffers (no
/// allocation per record). Thread-safe: any thread may seal or open at once.
///
/// On Linux it uses the system libcrypto (OpenSSL 3) through `CLibCrypto`, with contexts that
/// keep the key schedule and are reused from a small pool (one per thread in use at once): per
/// record only the nonce is set. swift-crypto would set the key up and allocate its result for
/// every record, which cost 2.8 µs per 100-byte put (measured; the Performance article), and
/// Linux builds no swift-crypto at all. On Apple platforms it seals with swift-crypto
/// (CryptoKit). Both give the same bytes: AES-GCM is a standard (NIST SP 800-38D).
final class AESGCMKey: @unchecked Sendable {
    #if canImport(CLibCrypto)
    private let key: EncryptionKey
    /// Idle contexts (`EVP_CIPHER_CTX *`), for sealing and for opening.
    private let sealing = Locked<[OpaquePointer]>([])
    private let opening = Locked<[OpaquePointer]>([])

    init(_ key: EncryptionKey) {
        self.key = key
    }
    #else
    /// The key as CryptoKit takes it, made once.
    let symmetricKey: SymmetricKey

    init(_ key: EncryptionKey) {
        symmetricKey = key.withUnsafeBytes { SymmetricKey(data: $0) }
    }
    #endif

    #if canImport(CLibCrypto)
    deinit {
        for ctx in sealing.withLock({ $0 }) + opening.withLock({ $0 }) { cask_gcm_free(ctx) }
    }

    /// Seals `plaintext` into `ciphertext` (the same length) and `tag` (16 bytes) under `nonce`
    /// (12 bytes), authenticating `associated`.
    func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer,
              ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer) {
        let sealed = withContext(sealing, encrypt: true) { ctx in
            cask_gcm_seal(ctx, bytes(nonce), bytes(associated), Int32(associated.count), bytes(plaintext), Int32(plaintext.count),
                          ciphertext.baseAddress?.assumingMemoryBound(to: UInt8.self), tag.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        // With a valid context, fixed sizes and in-memory buffers, AES-GCM has no way to fail.
        precondition(sealed == 1, "libcrypto failed to seal with AES-256-GCM")
    }

    /// Opens `ciphertext` into `plaintext` (the same length) when `tag` authenticates it and
    /// `associated` under `nonce`; false when it does not: damage, never a failed read (there is
    /// no I/O here, and libcrypto failing for another reason stops the process instead).
    func open(_ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
              associated: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer) -> Bool {
        let opened = withContext(opening, encrypt: false) { ctx in
            cask_gcm_open(ctx, bytes(nonce), bytes(associated), Int32(associated.count), bytes(ciphertext), Int32(ciphertext.count),
                          bytes(tag), plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self))
        }
        precondition(opened >= 0, "libcrypto failed to run AES-256-GCM")
        return opened == 1
    }

    /// A context of its own for one sealer, used by one thread at a time (no pool, no lock).
    func makeSealingContext() -> SealingContext { SealingContext(makeContext(encrypt: true)) }

    /// One sealing context (`EVP_CIPHER_CTX *`), freed with its owner. Unchecked `Sendable`:
    /// its owner (a ``RecordSealer``) uses it from one thread at a time, under the store's lock
    /// or on the compaction thread.
    final class SealingContext: @unchecked Sendable {
        fileprivate let ctx: OpaquePointer
        fileprivate init(_ ctx: OpaquePointer) { self.ctx = ctx }
        deinit { cask_gcm_free(ctx) }
    }

    /// ``seal(_:nonce:associated:ciphertext:tag:)`` with `context`, one of this key's.
    func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer,
              ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer, with context: SealingContext) {
        let sealed = cask_gcm_seal(context.ctx, bytes(nonce), bytes(associated), Int32(associated.count), bytes(plaintext), Int32(plaintext.count),
                                   ciphertext.baseAddress?.assumingMemoryBound(to: UInt8.self), tag.baseAddress!.assumingMemoryBound(to: UInt8.self))
        precondition(sealed == 1, "libcrypto failed to seal with AES-256-GCM")
    }

    /// Runs `body` with an idle context of `pool` (made when none is idle), then returns it.
    private func withContext(_ pool: Locked<[OpaquePointer]>, encrypt: Bool, _ body: (OpaquePointer) -> Int32) -> Int32 {
        let ctx = pool.withLock { $0.popLast() } ?? makeContext(encrypt: encrypt)
        let result = body(ctx)
        pool.withLock { $0.append(ctx) }
        return result
    }

    func makeContext(encrypt: Bool) -> OpaquePointer {
        let ctx = key.withUnsafeBytes { cask_gcm_new(bytes($0), encrypt ? 1 : 0) }
        guard let ctx else { preconditionFailure("libcrypto could not make an AES-256-GCM context (out of memory)") }
        return ctx
    }

    private func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
    #else
    /// On Apple platforms a sealer needs no context of its own.
    final class SealingContext: Sendable {}
    func makeSealingContext() -> SealingContext { SealingContext() }

    func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer,
              ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer, with context: SealingContext) {
        seal(plaintext, nonce: nonce, associated: associated, ciphertext: ciphertext, tag: tag)
    }

    func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer,
              ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer) {
        do {
            let box = try AES.GCM.seal(plaintext, using: symmetricKey, nonce: try AES.GCM.Nonce(data: nonce), authenticating: associated)
            box.ciphertext.withUnsafeBytes { ciphertext.copyMemory(from: $0) }
            box.tag.withUnsafeBytes { tag.copyMemory(from: $0) }
        } catch {
            preconditionFailure("AES-GCM refused a 12-byte nonce and a 256-bit key: \(error)")
        }
    }

    func open(_ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
              associated: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer) -> Bool {
        do {
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            let opened = try AES.GCM.open(box, using: symmetricKey, authenticating: associated)
            opened.withUnsafeBytes { plaintext.copyMemory(from: $0) }
            return true
        } catch {
            return false   // authentication failed (sizes are fixed by the caller)
        }
    }
    #endif
}
