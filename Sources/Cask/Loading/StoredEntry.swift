import Foundation

/// A value the cache holds for the loader API, with its periods (ms since 1970).
struct StoredEntry<T: Sendable>: Sendable {
    let value: T
    /// The end of its fresh period: a cache entry's own, or a plain value's expiry; 0 = never.
    let freshUntil: Int64

    func isFresh(at now: Int64) -> Bool { freshUntil == 0 || now < freshUntil }

    /// Whether `now` is in the last `1 - eagerRefresh` of a fresh period of `timeToLive`.
    func isDueForEagerRefresh(at now: Int64, options: CacheEntryOptions) -> Bool {
        guard let lead = options.eagerLeadMilliseconds, freshUntil != 0 else { return false }
        return now >= freshUntil - lead
    }
}

extension CaskCache {
    /// Under the memory shard's lock: a copy's value with its fresh period when the copy
    /// answers alone, else the same for the disk layer to confirm (``memoryHit(forKey:)``'s
    /// rules, stale entries included: the loader API serves them).
    struct EntryRead<T: Sendable>: MemoryRead {
        let now: Int64
        let fresh: Bool
        let ageLimit: Int64

        func read(_ item: borrowing MemoryItem, previousUse: Int64) -> (result: MemoryHit<StoredEntry<T>>, recordUse: Bool) {
            guard let typed = item.value(as: T.self) else { return (.mismatch, false) }
            let entry = StoredEntry(value: typed, freshUntil: item.freshUntil != 0 ? item.freshUntil : item.expiry)
            if fresh && (item.expiry == 0 || now < item.expiry) && (ageLimit == 0 || now - previousUse <= ageLimit) {
                return (.answered(entry), true)
            }
            return (.needsDisk(entry, item.sequence), false)
        }
    }

    /// What the cache holds for `key` as a `T`, stale or fresh, or nil: memory first, then disk
    /// (off Swift's cooperative pool).
    func storedEntry<T: Codable & Sendable>(forKey key: String, as type: T.Type, now: Int64) async throws(CacheLoadError) -> StoredEntry<T>? {
        do {
            let reader = EntryRead<T>(now: now, fresh: tracksUses, ageLimit: diskAgeLimit)
            copies.catchUp()
            switch memory.value(forKey: key, now: now, reading: reader) {
            case .answered(let entry):
                copies.noteLookup()
                return entry
            case .needsDisk(let entry, let sequence):
                if try checkedHit(entry, sequence: sequence, forKey: key, now: now) != nil { return entry }
            case .mismatch, nil:
                break
            }
            if let local = try await Self.offload({ () throws(CaskError) in try self.diskEntry(forKey: key, as: T.self) }) { return local }
            return try await sharedEntry(forKey: key, as: T.self)
        } catch {
            throw .cache(error)
        }
    }

    /// The disk layer's entry for `key` decoded as a `T` and kept in memory, or nil.
    private func diskEntry<T: Codable & Sendable>(forKey key: String, as type: T.Type) throws(CaskError) -> StoredEntry<T>? {
        guard let found = try diskRecord(forKey: key) else { return nil }
        let value: T = T.self == Data.self ? found.data as! T : try decode(found.data, forKey: key)
        remember(value, found, forKey: key)
        return StoredEntry(value: value, freshUntil: found.freshUntil != 0 ? found.freshUntil : found.entry.expiry)
    }

    /// `value`'s bytes: a `Data` as it is, anything else through the cache's coder.
    /// - Throws: ``CaskError/coding(key:reason:)``.
    func encode<T: Encodable & Sendable>(_ value: T, forKey key: String) throws(CaskError) -> Data {
        if let bytes = value as? Data { return bytes }
        do { return try options.coder.encode(value) } catch {
            throw CaskError.coding(key: key, reason: "\(error)")
        }
    }
}

extension CaskCache {
    /// Under the memory shard's lock: a copy's value when it answers a get-or-load alone: a
    /// `T`, fresh, not due for an eager refresh, and a copy that needs no word from the disk
    /// layer (``HitRead``'s rules). Anything else is left to the full path, which reads again.
    @usableFromInline
    struct FreshRead<T: Sendable>: MemoryRead {
        @usableFromInline let now: Int64
        @usableFromInline let tracksUses: Bool
        @usableFromInline let ageLimit: Int64
        @usableFromInline let eagerLead: Int64?

        @inlinable init(now: Int64, tracksUses: Bool, ageLimit: Int64, eagerLead: Int64?) {
            self.now = now
            self.tracksUses = tracksUses
            self.ageLimit = ageLimit
            self.eagerLead = eagerLead
        }

        @inlinable @inline(__always)
        func read(_ item: borrowing MemoryItem, previousUse: Int64) -> (result: MemoryHit<T>, recordUse: Bool) {
            guard let typed = item.value(as: T.self) else { return (.mismatch, false) }
            let freshUntil = item.freshUntil != 0 ? item.freshUntil : item.expiry
            guard freshUntil == 0 || now < freshUntil else { return (.mismatch, false) }
            if let eagerLead, freshUntil != 0, now >= freshUntil - eagerLead { return (.mismatch, false) }
            guard item.answersAlone(now: now, previousUse: previousUse, tracksUses: tracksUses, ageLimit: ageLimit) else {
                return (.mismatch, false)
            }
            return (.answered(typed), true)
        }
    }

    /// A fresh value of `key` that the memory layer answers alone for the loader API (counted
    /// as a use, as a plain memory hit is), or nil for the full path. Nil for invalid options
    /// too: the full path throws for them.
    @inlinable
    func freshMemoryHit<T: Sendable>(forKey key: String, options: CacheEntryOptions) -> T? {
        guard options.isValid else { return nil }
        let now = self.options.disk.clock.now
        let reader = FreshRead<T>(now: now, tracksUses: tracksUses, ageLimit: diskAgeLimit, eagerLead: options.eagerLeadMilliseconds)
        copies.catchUp()
        guard case .answered(let value)? = memory.value(forKey: key, now: now, reading: reader) else { return nil }
        copies.noteLookup()
        return value
    }
}
