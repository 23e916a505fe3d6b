import CaskFormat
#if canImport(CLibCrypto)
import CLibCrypto
#else
import Crypto
import Foundation
#endif

/// A GMAC (AES-GCM authenticating data only, with no ciphertext) fed piece by piece: the tag
/// of one section of a sealed file (format-spec.md, "File seals"). Used by one thread at a time.
final class GMACStream {
    #if canImport(CLibCrypto)
    private let ctx: OpaquePointer

    /// A stream under `key` with `nonce` (12 bytes), which must never be used twice with it.
    init(key: AESGCMKey, nonce: [UInt8]) {
        ctx = key.makeContext(encrypt: true)
        let begun = nonce.withUnsafeBufferPointer { cask_gmac_begin(ctx, $0.baseAddress) }
        precondition(begun == 1, "libcrypto failed to start a GMAC")
    }

    deinit { cask_gcm_free(ctx) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        let added = cask_gmac_update(ctx, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
        precondition(added == 1, "libcrypto failed to add to a GMAC")
    }

    /// The 16-byte tag of everything added.
    func finish() -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Format.FileSeal.tagSize)
        let done = tag.withUnsafeMutableBufferPointer { cask_gmac_finish(ctx, $0.baseAddress) }
        precondition(done == 1, "libcrypto failed to finish a GMAC")
        return tag
    }
    #else
    private let key: SymmetricKey
    private let nonce: [UInt8]
    private var data: [UInt8] = []

    init(key: AESGCMKey, nonce: [UInt8]) {
        self.key = key.symmetricKey
        self.nonce = nonce
    }

    func update(_ bytes: UnsafeRawBufferPointer) { data.append(contentsOf: bytes) }

    func finish() -> [UInt8] {
        do {
            let box = try AES.GCM.seal([UInt8](), using: key, nonce: try AES.GCM.Nonce(data: nonce), authenticating: data)
            return Array(box.tag)
        } catch {
            preconditionFailure("AES-GCM refused a 12-byte nonce and a 256-bit key: \(error)")
        }
    }
    #endif
}
