import Cask
import Dispatch
import ServiceLifecycle

/// A ``Cask/DiskStore`` used without the cache facade, as a swift-service-lifecycle `Service`:
/// in a `ServiceGroup`, it waits for the group's graceful shutdown (or its task's cancellation),
/// then closes the store (syncing it and writing its index snapshot) on a dispatch thread, off
/// Swift's cooperative pool.
public struct DiskStoreService: Service {
    /// The store the service closes at shutdown.
    public let store: DiskStore

    public init(store: DiskStore) { self.store = store }

    /// Waits for graceful shutdown or cancellation, then closes the store.
    /// - Throws: what ``Cask/DiskStore/close()`` throws (a failed sync of the store).
    public func run() async throws {
        try? await gracefulShutdown()   // a cancellation ends the wait as a shutdown does
        let store = self.store
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async { done.resume(with: Result { try store.close() }) }
        }
    }
}
