import Foundation

/// The disk store as the facade's tier: the adapter lives with the facade, so the disk layer
/// knows nothing of the layer above.
extension DiskStore: CacheTier {
    func write(_ value: UnsafeRawBufferPointer, forKey key: String, timeToLive: Duration?, isPinned: Bool) throws(CaskError) -> TierRecord? {
        try put(value, forKey: key, timeToLive: timeToLive, isPinned: isPinned).map(TierRecord.init)
    }

    func write(_ value: UnsafeRawBufferPointer, forKey key: String, freshFor: Duration, staleWindow: Duration, tags: [String]) throws(CaskError) -> TierRecord? {
        let freshUntil = Self.expiry(now: options.clock.now, timeToLive: freshFor)
        let expiry = Self.expiry(now: freshUntil, timeToLive: staleWindow)
        guard let entry = try writeEntry(value, forKey: key, freshUntil: freshUntil, expiry: expiry, tags: tags) else { return nil }
        return TierRecord(sequence: entry.sequence, expiry: entry.expiry, freshUntil: freshUntil)
    }

    func read(forKey key: String) throws(CaskError) -> TierRead? {
        try withRecord(forKey: key) { bytes, entry, freshUntil in
            TierRead(data: Data(bytes), record: TierRecord(sequence: entry.sequence, expiry: entry.expiry, freshUntil: freshUntil))
        }
    }

    func confirm(_ key: String, record: UInt64, usedAt now: Int64) throws(CaskError) -> Bool {
        try touch(key, now: now) == record
    }

    func changeJournal() -> RecordChanges { trackChanges() }
}

extension TierRecord {
    init(_ entry: IndexEntry) {
        self.init(sequence: entry.sequence, expiry: entry.expiry)
    }
}
