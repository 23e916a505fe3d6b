import Cask

/// Options for one node of a test cluster on `tier`, with id `node`. The timeout is long: a
/// test process's pool can be busy for seconds, and a call past its timeout counts as a
/// failure of the tier.
public func sharedTierOptions(_ tier: any SharedTier, node: UInt32) -> CacheOptions {
    var options = CacheOptions()
    options.sharedTier = tier
    options.sharedTierNode = node
    options.sharedTierTimeout = .seconds(30)
    return options
}

/// Whether `condition` came to hold, polled every 5 ms, within 24,000 polls (2 minutes of the
/// task's own sleeps, however long a busy machine makes them).
public func pollsUntil(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<24_000 {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// Whether every cache came to have sent what it queued and to follow its tier live.
public func sharedTierSettled(_ caches: [CaskCache]) async -> Bool {
    await pollsUntil {
        caches.allSatisfy { $0.sharedTierStatistics?.changesWaiting == 0 && $0.sharedTierStatistics?.isFollowing == true }
    }
}
