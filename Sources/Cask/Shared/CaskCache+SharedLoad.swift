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
    /// `freshUntil`: the end of the fresh period of the value a refresh replaces (0: none);
    /// only a tier entry fresh for longer answers a refresh.
    /// - Throws: what `loader` throws; `CancellationError` for an abandoned load (its claim,
    ///   if it got one, released).
    func loadOnce<T: Codable & Sendable>(_ key: String, as type: T.Type, replacing freshUntil: Int64,
                                         loader: @Sendable () async throws -> T) async throws -> SharedLoad<T> {
        guard let shared, let lease = options.sharedTierLoadLease, lease > .zero else { return .loadedHere(try await loader(), claim: nil) }
        let giveUp = ContinuousClock.now + lease * 2
        var pause = Duration.milliseconds(5)
        while true {
            try Task.checkCancellation()   // an abandoned load neither claims nor loads
            switch await shared.claimLoad(of: key, for: lease) {
            case .granted(let token):
                return try await loadHoldingClaim(token, key, replacing: freshUntil, shared, loader)
            case .unavailable:
                return .loadedHere(try await loader(), claim: nil)
            case .heldElsewhere:
                if ContinuousClock.now >= giveUp { return .loadedHere(try await loader(), claim: nil) }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(100))
                if let value = await valueLoadedElsewhere(key, as: T.self, replacing: freshUntil, shared) { return .loadedElsewhere(value) }
            }
        }
    }

    /// With the claim `token` held: the value another node sent just before this claim was
    /// granted, else `loader`'s. The claim is released here unless the caller gets it back
    /// with a value to store.
    private func loadHoldingClaim<T: Codable & Sendable>(_ token: UInt64, _ key: String, replacing freshUntil: Int64, _ shared: SharedTierLink,
                                                         _ loader: @Sendable () async throws -> T) async throws -> SharedLoad<T> {
        do {
            try Task.checkCancellation()
            // A holder may have sent its value and released its claim just before this one
            // was granted: read once more before loading.
            if let value = await valueLoadedElsewhere(key, as: T.self, replacing: freshUntil, shared) {
                shared.releaseWhenSent(key, token: token)
                return .loadedElsewhere(value)
            }
            return .loadedHere(try await loader(), claim: token)
        } catch {
            shared.releaseWhenSent(key, token: token)   // the waiters claim and load
            throw error
        }
    }

    /// A fresh value of `key` in the shared tier, fresh for longer than `freshUntil` (a plain
    /// value only when nothing is replaced), kept as a local copy and counted as a load another
    /// node ran; nil otherwise, and when it cannot be read or decoded (this node then loads).
    private func valueLoadedElsewhere<T: Codable & Sendable>(_ key: String, as type: T.Type, replacing freshUntil: Int64,
                                                             _ shared: SharedTierLink) async -> T? {
        let now = options.disk.clock.now
        let usable: (SharedEntry) -> Bool = { $0.freshUntil == 0 ? freshUntil == 0 : $0.freshUntil > max(now, freshUntil) }
        guard let found = try? await sharedCopy(forKey: key, as: T.self, usable) else { return nil }
        shared.noteLoadFromOtherNode()
        return found.value
    }

    /// Releases a claim once the value stored under it is sent.
    func releaseLoadClaim(_ claim: UInt64?, forKey key: String) {
        guard let claim, let shared else { return }
        shared.releaseWhenSent(key, token: claim)
    }
}
