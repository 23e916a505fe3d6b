#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps what open stores acknowledged when the process exits normally (`exit()`, a return from
/// `main`) without closing them: an `atexit` handler, installed with the first store, hands
/// every open store's write buffer to the OS and, in `.interval` and `.everyWrite` modes,
/// `fdatasync`s it. A process killed by a signal runs no exit handlers (README, "Durability").
enum ExitFlush {
    private final class WeakStore: @unchecked Sendable {
        // Written once before it is shared; weak loads are atomic.
        weak var store: DiskStore?
        init(_ store: DiskStore) { self.store = store }
    }

    private static let open = Locked<[ObjectIdentifier: WeakStore]>([:])
    private static let installed: Bool = {
        atexit { ExitFlush.flushAll() }
        return true
    }()

    static func register(_ store: DiskStore) {
        _ = installed
        open.withLock { $0[ObjectIdentifier(store)] = WeakStore(store) }
    }

    static func unregister(_ store: DiskStore) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(store)) }
    }

    private static func flushAll() {
        let stores = open.withLock { $0.values.compactMap(\.store) }
        for store in stores { store.flushForExit() }
    }
}
