/// ``KeyIndex``'s key bytes: two ``KeyArena``s, each entry's key in the one its
/// ``StoredIndexEntry/keyArena`` names. New keys go to the *current* arena, into a place a
/// removed key of the same length left (``FreeKeySlots``) or at its end.
///
/// Removed keys leave garbage. Once more than half of the bytes (and over 1 MiB) are garbage,
/// the store *migrates*: the other arena becomes current, and every index change then moves a
/// few keys (``migrationStepEntries``) from the old arena into it, walking the entries from the
/// last to the first, until none is left and the old arena is freed. So no put or removal ever
/// copies all the keys at once (the one-go rewrite this replaces took 12-19 ms under the store's
/// lock after half of a million keys were removed). Walking backwards, no entry is missed: a
/// removal moves the last entry (already walked, or added since, so in the current arena) into
/// its hole. Not thread-safe: the index is used under the store's lock.
struct KeyStore: Sendable {
    // Two stored arenas, not an array of them: an array element read on every lookup would be
    // retained and released.
    private var arena0 = KeyArena()
    private var arena1 = KeyArena()
    /// The arena new keys go to.
    private(set) var current = 0
    /// Bytes of each arena no entry uses: removed keys' and padding.
    private var garbage0 = 0
    private var garbage1 = 0
    /// Places in the current arena that removed keys left.
    private var freeKeys = FreeKeySlots()
    /// While migrating: the entries numbered below it may still have their key in the old arena.
    private var migrationCursor: Int?

    /// Entries a change of the index moves (at most) while migrating.
    static let migrationStepEntries = 16

    init() {}

    /// Keys as a snapshot saves them (one after the other, in entry order) in the first arena.
    init(restoring bytes: ChunkedArray<UInt8>) {
        arena0 = KeyArena(bytes)
    }

    /// Bytes used in the first arena (a restored index's: every key, in entry order).
    var restoredByteCount: Int { arena0.count }

    /// Bytes of memory the arenas and free lists hold, for statistics.
    var memoryBytes: Int { arena0.memoryBytes + arena1.memoryBytes + freeKeys.memoryBytes }

    /// Bytes used in both arenas, garbage included.
    var count: Int { arena0.count + arena1.count }

    /// Bytes of the entries' keys (without garbage).
    var liveBytes: Int { arena0.count + arena1.count - garbage0 - garbage1 }

    /// Whether keys are being moved out of the old arena.
    var isMigrating: Bool { migrationCursor != nil }

    /// Runs `body` with the key of `e`.
    @inline(__always)
    func withKey<R>(of e: StoredIndexEntry, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withKey(at: e.keyOffset, length: e.keyLength, arena: e.keyArena, body)
    }

    /// Runs `body` with the key of `e`.
    @inline(__always)
    func withKey<R>(of e: IndexEntry, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withKey(at: e.keyOffset, length: e.keyLength, arena: Int(e.keyArena), body)
    }

    @inline(__always)
    private func withKey<R>(at offset: UInt32, length: UInt16, arena: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        arena == 0 ? try arena0.withKey(at: offset, length: length, body) : try arena1.withKey(at: offset, length: length, body)
    }

    /// Whether the key of `e` is `key` (whose length the caller compared).
    @inline(__always)
    func holds(_ key: UnsafeRawBufferPointer, for e: StoredIndexEntry) -> Bool {
        e.keyArena == 0 ? arena0.holds(key, at: e.keyOffset) : arena1.holds(key, at: e.keyOffset)
    }

    /// Adds `bytes` of garbage to `arena`'s count.
    private mutating func addGarbage(_ bytes: Int, in arena: Int) {
        if arena == 0 { garbage0 += bytes } else { garbage1 += bytes }
    }

    /// Stores `key` for a new entry; returns where (offset, arena).
    mutating func add(_ key: UnsafeRawBufferPointer) -> (offset: UInt32, arena: Int) {
        if let place = freeKeys.take(length: key.count) {
            if current == 0 { arena0.overwrite(at: place, with: key) } else { arena1.overwrite(at: place, with: key) }
            addGarbage(-key.count, in: current)
            return (place, current)
        }
        let added = current == 0 ? arena0.append(key) : arena1.append(key)
        addGarbage(added.padding, in: current)
        return (added.offset, current)
    }

    /// Notes that the key of `e` is no longer used; starts a migration once garbage dominates
    /// (the index then calls ``migrate(_:)`` as it changes).
    mutating func remove(_ e: StoredIndexEntry, entryCount: Int) {
        addGarbage(Int(e.keyLength), in: e.keyArena)
        if e.keyArena == current { freeKeys.add(offset: e.keyOffset, length: e.keyLength) }
        let total = arena0.count + arena1.count, waste = garbage0 + garbage1
        if migrationCursor == nil && waste > 1 << 20 && waste * 2 > total { startMigration(entryCount: entryCount) }
    }

    private mutating func startMigration(entryCount: Int) {
        current ^= 1
        freeKeys.removeAll()   // its places are in the old arena
        migrationCursor = entryCount
    }

    /// Moves the keys of up to `limit` entries (the highest numbers not yet walked) into the
    /// current arena; frees the old arena once every entry has been walked.
    mutating func migrate(_ entries: inout ChunkedArray<StoredIndexEntry>, limit: Int = migrationStepEntries) {
        guard var cursor = migrationCursor else { return }
        cursor = min(cursor, entries.count)
        let low = max(0, cursor - limit)
        for n in (low..<cursor).reversed() where entries[n].keyArena != current {
            let e = entries[n]
            // Old arena to current: arena1 to arena0 or the other way.
            let added = current == 0 ? arena1.withKey(at: e.keyOffset, length: e.keyLength) { arena0.append($0) }
                                     : arena0.withKey(at: e.keyOffset, length: e.keyLength) { arena1.append($0) }
            addGarbage(added.padding, in: current)
            addGarbage(Int(e.keyLength), in: e.keyArena)
            entries[n].moveKey(to: added.offset, arena: current)
        }
        if low > 0 {
            migrationCursor = low
        } else {
            if current == 0 { arena1 = KeyArena(); garbage1 = 0 } else { arena0 = KeyArena(); garbage0 = 0 }
            migrationCursor = nil
        }
    }

    /// Finishes a migration under way and frees the chunks past each arena's last key's.
    mutating func trimExcessCapacity(_ entries: inout ChunkedArray<StoredIndexEntry>) {
        while isMigrating { migrate(&entries, limit: 1 << 16) }
        arena0.releaseSpareChunks()
        arena1.releaseSpareChunks()
    }
}
