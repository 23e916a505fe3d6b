import Foundation

/// One load per key across the nodes of a shared tier (``CacheOptions/sharedTierLoadLease``).
extension CaskCache {
    /// Where a get-or-load's value came from.
    enum SharedLoad<T: Sendable>: Sendable {
        /// This node's loader ran: the value is to be stored (and sent); `claim` is released
        /// once it is sent.
        case loadedHere(T, claim: UInt64?)
        /// Another node's load, read from the shared tier (already kept as a local copy).
        case loadedElsewhere(T)
    }

    /// Runs `loader` on the node that claims `key`'s load; on the others, waits for that
    /// node's value in the shared tier. Without a shared tier or a lease: `loader`.
    func loadOnce<T: Codable & Sendable>(_ key: String, as type: T.Type,
                                         loader: @Sendable () async throws -> T) async throws -> SharedLoad<T> {
        guard let shared, let lease = options.sharedTierLoadLease, lease > .zero else { return .loadedHere(try await loader(), claim: nil) }
        let giveUp = ContinuousClock.now + lease * 2
        var pause = Duration.milliseconds(5)
        while true {
            switch await shared.claimLoad(of: key, for: lease) {
            case .granted(let token):
                // A holder may have sent its value and released its claim just before this
                // one was granted: read once more before loading.
                if let value = try await valueLoadedElsewhere(key, as: T.self, shared) {
                    shared.releaseWhenSent(key, token: token)
                    return .loadedElsewhere(value)
                }
                do { return .loadedHere(try await loader(), claim: token) } catch {
                    shared.releaseWhenSent(key, token: token)   // the waiters claim and load
                    throw error
                }
            case .unavailable:
                return .loadedHere(try await loader(), claim: nil)
            case .heldElsewhere:
                try Task.checkCancellation()   // an abandoned load runs no loader
                if ContinuousClock.now >= giveUp { return .loadedHere(try await loader(), claim: nil) }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(100))
                if let value = try await valueLoadedElsewhere(key, as: T.self, shared) { return .loadedElsewhere(value) }
            }
        }
    }

    /// A fresh value of `key` in the shared tier (kept as a local copy), counted as a load
    /// another node ran.
    private func valueLoadedElsewhere<T: Codable & Sendable>(_ key: String, as type: T.Type, _ shared: SharedTierLink) async throws -> T? {
        let now = options.disk.clock.now
        guard let (value, _) = try await sharedCopy(forKey: key, as: T.self, { $0.freshUntil == 0 || now < $0.freshUntil }) else { return nil }
        shared.noteLoadFromOtherNode()
        return value
    }

    /// Releases a claim once the value stored under it is sent.
    func releaseLoadClaim(_ claim: UInt64?, forKey key: String) {
        guard let claim, let shared else { return }
        shared.releaseWhenSent(key, token: claim)
    }
}
