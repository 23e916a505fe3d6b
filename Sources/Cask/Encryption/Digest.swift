#if canImport(CLibCrypto)
import CLibCrypto
#else
import Crypto
#endif

/// SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104): what derives a key's id and its file-seal
/// key (format-spec.md, "Sealed records", "File seals"). The system libcrypto on Linux,
/// swift-crypto (CryptoKit) on Apple platforms: the same bytes either way (the tests check
/// known vectors). Stateless; thread-safe.
enum Digest {
    /// The size of either digest, in bytes.
    static let size = 32

    #if canImport(CLibCrypto)
    /// HMAC-SHA256 of `message` under `key` (any length: a key longer than 64 bytes is hashed
    /// first, as RFC 2104 says).
    static func hmacSHA256(_ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: size)
        let done = mac.withUnsafeMutableBufferPointer { out in
            cask_hmac_sha256(bytes(key), Int32(key.count), bytes(message), message.count, out.baseAddress)
        }
        // In-memory bytes and a fixed algorithm: only a failed allocation inside libcrypto is left.
        precondition(done == 1, "libcrypto failed to compute an HMAC-SHA256 (out of memory)")
        return mac
    }

    /// SHA-256 of `data`.
    static func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: size)
        let done = digest.withUnsafeMutableBufferPointer { out in cask_sha256(bytes(data), data.count, out.baseAddress) }
        precondition(done == 1, "libcrypto failed to compute a SHA-256 (out of memory)")
        return digest
    }

    /// The bytes of `buffer` as libcrypto takes them (NULL for an empty one, which it accepts
    /// with a count of 0).
    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
    #else
    static func hmacSHA256(_ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    static func sha256(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        Array(SHA256.hash(data: data))
    }
    #endif
}
