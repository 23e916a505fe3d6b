#if canImport(CLibCrypto)
import CLibCrypto
#endif

/// The crypto library's process-wide state. On Linux, libcrypto sets itself up on first use
/// and registers an exit handler then, which frees its tables; exit handlers run in reverse
/// order of registration.
package enum CryptoRuntime {
    /// Sets libcrypto up now (nothing on Apple platforms), so that an exit handler registered
    /// after this call runs before libcrypto's (``ExitFlush`` waits there for stores closing).
    package static func initialise() {
        #if canImport(CLibCrypto)
        _ = cask_crypto_init()
        #endif
    }
}
