import Foundation

/// The cache facade's side of ``CacheOptions/sharedTier``: read-through on a local miss,
/// every change sent on, other nodes' changes applied to the local layers.
extension CaskCache {
    /// What the shared tier did (nil without one).
    public var sharedTierStatistics: SharedTierStatistics? { shared?.statistics }

    /// The cursor of the last shared-tier notice this node handled (for tests).
    package var sharedTierCursor: String? { shared?.followedCursor }

    /// Drops the local copies found at open (they may have missed other nodes' changes while
    /// this process was down) and starts following the tier's changes.
    func startSharedTier() throws(CaskError) {
        guard let shared else { return }
        try dropLocalCopies()
        shared.follow { [weak self] notice in await self?.applySharedNotice(notice) }
    }

    /// Sends a write the local layers made (or declined) to the shared tier.
    /// - Throws: what writing the outbox's journal throws.
    func sendToSharedTier(_ data: Data, forKey key: String, as kind: TierWrite, record: TierRecord?) throws(CaskError) {
        guard let shared else { return }
        let now = options.disk.clock.now
        let entry: SharedEntry
        switch kind {
        case let .plain(timeToLive, _):
            let expiry = record?.expiry ?? timeToLive.map { now + max(1, $0.milliseconds) } ?? 0
            entry = SharedEntry(value: data, freshUntil: 0, expiry: expiry, tags: [], version: shared.nextVersion())
        case let .entry(freshFor, staleWindow, tags):
            let fresh = record?.freshUntil ?? now + freshFor.milliseconds
            let expiry = record?.expiry ?? fresh + staleWindow.milliseconds
            entry = SharedEntry(value: data, freshUntil: fresh, expiry: expiry, tags: tags, version: shared.nextVersion())
        }
        try shared.send(.set(key: key, entry: entry))
    }

    /// The value of `key` from the local layers, else (with a shared tier) from the shared
    /// tier while fresh, decoded and kept locally as a copy.
    @usableFromInline
    func valueThroughTiers<T: Decodable & Sendable>(_ type: T.Type, forKey key: String) async throws(CaskError) -> T? {
        if let local = try await Self.offload({ () throws(CaskError) in try self.value(type, forKey: key) }) { return local }
        let now = options.disk.clock.now
        return try await sharedCopy(forKey: key, as: T.self) { $0.freshUntil == 0 || now < $0.freshUntil }?.value
    }

    /// The shared tier's entry of `key` for get-or-load (stale ones included), kept locally.
    func sharedEntry<T: Codable & Sendable>(forKey key: String, as type: T.Type) async throws(CaskError) -> StoredEntry<T>? {
        guard let (value, entry) = try await sharedCopy(forKey: key, as: T.self, { _ in true }) else { return nil }
        return StoredEntry(value: value, freshUntil: entry.freshUntil != 0 ? entry.freshUntil : entry.expiry)
    }

    /// The shared tier's entry of `key` when `usable`, decoded as a `T` and kept locally.
    func sharedCopy<T: Decodable & Sendable>(forKey key: String, as type: T.Type,
                                                     _ usable: (SharedEntry) -> Bool) async throws(CaskError) -> (value: T, entry: SharedEntry)? {
        guard let shared, let (entry, mark) = await shared.entry(forKey: key), usable(entry) else { return nil }
        let value: T = T.self == Data.self ? entry.value as! T : try decode(entry.value, forKey: key)
        try await keepCopy(value, of: entry, forKey: key, mark: mark, shared: shared)
        return (value, entry)
    }

    /// Stores a copy of the shared tier's `entry` in the local layers (not sent back), with
    /// its own fresh and expiry times, unless a change (another node's, or this node's own)
    /// was applied or made while it was read (`mark`): then no copy is kept, and one written
    /// meanwhile is removed again, as it may be older than that change.
    private func keepCopy<T: Sendable>(_ value: T, of entry: SharedEntry, forKey key: String, mark: Int, shared: SharedTierLink) async throws(CaskError) {
        let now = options.disk.clock.now
        // Saturating: the times come from another process.
        let freshLeft = entry.freshUntil.subtractingReportingOverflow(now)
        let expiryLeft = entry.expiry.subtractingReportingOverflow(max(now, entry.freshUntil))
        let plainLeft = entry.expiry.subtractingReportingOverflow(now)
        guard !freshLeft.overflow, !expiryLeft.overflow, !plainLeft.overflow else { return }
        let kind: TierWrite
        if entry.freshUntil != 0 {
            kind = .entry(freshFor: .milliseconds(max(0, freshLeft.partialValue)), staleWindow: .milliseconds(max(0, expiryLeft.partialValue)), tags: entry.tags)
        } else {
            kind = .plain(timeToLive: entry.expiry == 0 ? nil : .milliseconds(max(1, plainLeft.partialValue)), isPinned: false)
        }
        try await Self.offload { () throws(CaskError) in
            guard shared.isUnchanged(since: mark, key: key) else { return }
            try self.writeThrough(value, data: entry.value, forKey: key, as: kind, propagates: false)
            if !shared.isUnchanged(since: mark, key: key) { try self.removeLocally(forKey: key) }
        }
    }

    /// Applies another node's change (or a lost history) to the local layers; a failure is
    /// reported as an event and the local copies are dropped where they can be.
    func applySharedNotice(_ notice: SharedNotice) async {
        _ = try? await Self.offload { () throws(CaskError) in
            switch notice {
            case .change(.set(let key, _), _), .change(.remove(let key, _), _): try self.removeLocally(forKey: key)
            case .change(.removePrefix(let prefix, _), _): _ = try self.removeLocally(withPrefix: prefix)
            case .change(.removeTag(let tag, _), _): _ = try self.removeLocally(taggedWith: tag)
            case .historyLost: try self.dropLocalCopies()
            case .live, .interrupted: break
            }
        }
    }

    /// Removes `key` from this node's layers only.
    func removeLocally(forKey key: String) throws(CaskError) {
        memory.removeValue(forKey: key)
        _ = try disk.removeValue(forKey: key)
    }

    /// Removes everything from this node's layers only.
    func dropLocalCopies() throws(CaskError) {
        memory.removeAll()
        try disk.removeAll()
        copies.catchUp()
    }
}
