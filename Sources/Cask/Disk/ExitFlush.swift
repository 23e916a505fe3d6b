#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(CLibCrypto)
import CLibCrypto
#endif

/// Keeps what open stores acknowledged when the process exits normally (`exit()`, a return from
/// `main`) without closing them: an `atexit` handler, installed with the first store, hands
/// every open store's write buffer to the OS and, in `.interval` and `.everyWrite` modes,
/// `fdatasync`s it. A process killed by a signal runs no exit handlers (README, "Durability").
///
/// A store dropped without `close()` may be closing on a background thread (its last
/// reference was that thread's) while the process exits. The handler waits for such closes,
/// up to ``closeWait``, so that no close runs on while the process tears down what it uses
/// (libcrypto frees its tables in an exit handler of its own; this one is installed after
/// libcrypto's, so it runs first).
enum ExitFlush {
    private final class WeakStore: @unchecked Sendable {
        // Written once before it is shared; weak loads are atomic.
        weak var store: DiskStore?
        init(_ store: DiskStore) { self.store = store }
    }

    private static let open = Locked<[ObjectIdentifier: WeakStore]>([:])
    /// Closes under way (explicit or from a deinit).
    private static let closing = Locked<Int>(0)
    /// How long the exit handler waits for closes under way.
    static let closeWait: Duration = .seconds(10)
    private static let installed: Bool = {
        #if canImport(CLibCrypto)
        _ = cask_crypto_init()   // libcrypto's exit handler first, so that it runs after this one
        #endif
        atexit { ExitFlush.flushAll() }
        return true
    }()

    static func register(_ store: DiskStore) {
        _ = installed
        open.withLock { $0[ObjectIdentifier(store)] = WeakStore(store) }
    }

    /// Runs `close`, a store's close, counted as under way until it returns.
    static func closing<T, E: Error>(_ store: DiskStore, _ close: () throws(E) -> T) throws(E) -> T {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(store)) }
        closing.withLock { $0 += 1 }
        defer { closing.withLock { $0 -= 1 } }
        return try close()
    }

    /// Closes under way now (for tests).
    static var closesUnderWay: Int { closing.withLock { $0 } }

    private static func flushAll() {
        let stores = open.withLock { $0.values.compactMap(\.store) }
        for store in stores { store.flushForExit() }
        waitForCloses(upTo: closeWait)
    }

    /// Waits until no close is under way, or `limit` has passed.
    static func waitForCloses(upTo limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while closesUnderWay > 0 && ContinuousClock.now < deadline { usleep(1_000) }
    }
}
