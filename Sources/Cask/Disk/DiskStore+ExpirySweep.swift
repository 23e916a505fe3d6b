import CaskFormat

/// The background sweep of expired and aged-out items (format-spec.md, "Eviction without a
/// tombstone"): the compaction thread runs it before it plans a pass, at most once a second
/// (and before every forced pass), so that dead items' bytes can go.
extension DiskStore {
    /// Walks the index from its last entry to its first in slices of the store's lock,
    /// evicting every item whose TTL has run out or that is past the age limit (with a
    /// tombstone when an older record of its key may remain elsewhere). O(items) in the
    /// compaction thread's time, never more than a slice under the lock: the walk in one
    /// hold took 6-19 ms at a million items with expiries, and every put arriving meanwhile
    /// waited for it. A tombstone that cannot be written leaves the item in the index, where
    /// reads find it gone; the next sweep tries again.
    func sweepExpiredItems(force: Bool, now: Int64) {
        guard state.withLock({ $0.startExpirySweep(now: now, force: force) }) else { return }
        walkIndexBackwards(background: true) { s, range in s.evictGone(in: range, now: now) }
    }
}

extension StoreState {
    /// Whether the expiry sweep is due at `now` (some item can expire or age out, and the last
    /// sweep is a second old or `force`); if so, notes that it runs now.
    mutating func startExpirySweep(now: Int64, force: Bool) -> Bool {
        guard !isClosed, expiringCount > 0 || ageLimitMilliseconds > 0,
              force || now - work.lastExpirySweep >= 1000 else { return false }
        work.noteExpirySweep(at: now)
        return true
    }

    /// Evicts the expired or aged-out items among the entries numbered in `range` (every one
    /// of them is checked before any is evicted: an eviction moves the last entry, already
    /// walked, into its place).
    mutating func evictGone(in range: Range<Int>, now: Int64) {
        let age = ageLimitMilliseconds
        var victims: [([UInt8], EvictionCause)] = []
        for n in range {
            index.withKey(at: n) { key, e in
                if !e.isTombstone, let cause = Self.goneCause(e, now: now, ageLimit: age) { victims.append((Array(key), cause)) }
            }
        }
        for (key, cause) in victims {
            // Harmless `try?`: a failed tombstone append leaves the expired item in the index,
            // where reads find it gone; the next sweep tries again. Nothing is read here.
            _ = try? key.withBytes { k throws(CaskError) in try evict(k, cause: cause, now: now, tombstoneIfNeeded: true) }
        }
    }
}
