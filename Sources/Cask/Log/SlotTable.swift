/// The open-addressing table of a ``KeyIndex``: 8-byte slots, each 0 (empty) or a key's 32-bit
/// hash fingerprint above its entry number plus one, probed linearly from the key's home slot
/// `fingerprint * size >> 32` (any size). Keys are never read here: slots move by their
/// fingerprints, and the index confirms a candidate by its entry's key.
///
/// Growing is incremental. When a new key would make the table more than 3/4 full, a table
/// half as large again becomes the current one and the old one is *drained* into it: every
/// insert moves at least ``slotsPerStep`` of its slots, whole runs at a time (a run is a stretch
/// of occupied slots between empty ones, and a key lies in the run of its home slot), so the
/// old table still answers for the keys left in it. Lookups look in the current table, then in
/// the draining one. 32 slots per insert empty the old table long before the new one is 3/4
/// full (2.7 would do). The larger table itself is made ahead, outside the lock, by the store's
/// flush thread once the table is 65% full and growing (``preparationTick(count:)``); without one, the
/// insert that starts a growth allocates and zeroes it. `cask-harness growth` (2.5 M new
/// keys, every put timed): the put that started the growth at 2,274,723 keys took 35.6 ms when
/// it rehashed the whole table, 13.5 ms in steps with the table allocated inline, and no put
/// over 1 ms comes from a growth with the table made ahead.
///
/// A slot is named by a reference: below ``size`` a slot of the current table, above it one of
/// the draining table. Not thread-safe (the index's owner locks).
struct SlotTable: Sendable {
    private(set) var current: [UInt64]
    /// The table being emptied into `current`; empty when no growth is under way.
    private var draining: [UInt64] = []
    /// The draining table's empty slot where its migration started, and where it ends.
    private var drainEnd = 0
    /// The next draining slot to move (always between two runs when a step ends).
    private var drainNext = 0
    /// A zeroed table of the next growth's size, made outside the owner's lock.
    private var prepared: [UInt64]?
    /// The entry count at the last ``preparationTick(count:)``, and the ticks since a prepared
    /// table was last brought closer to use.
    private var countAtLastTick = 0
    private var idleTicks = 0

    static let minimumSize = 16
    /// Draining slots each insert looks at, at least (and then to the end of a run).
    static let slotsPerStep = 32

    init(size: Int) { current = [UInt64](repeating: 0, count: max(Self.minimumSize, size)) }

    /// A table as an ``IndexSnapshot`` saved it.
    init(restoring slots: [UInt64]) { current = slots }

    /// Slots of the current table.
    var size: Int { current.count }
    var isGrowing: Bool { !draining.isEmpty }
    var memoryBytes: Int { (current.capacity + draining.capacity + (prepared?.capacity ?? 0)) * 8 }

    /// The size of the table the next growth makes.
    private var nextSize: Int { current.count + current.count / 2 }

    /// Ticks without a new entry after which a prepared table is given back: 50, 1 s of the
    /// flush thread's 20 ms ticks, which run only while something is written (an idle store
    /// keeps its table; a store that adds a key less often than that makes the table again, a
    /// few ms of the flush thread, when it next adds one past 65%).
    static let idleTicksBeforeRelease = 50

    /// The flush thread's look at the next growth, at each of its ticks: `wanted` is the size of
    /// table to make ahead (zeroed, outside the owner's lock) when entries were added since the
    /// last tick, fill 65% of the table and none is made. A prepared table that no entry has
    /// been added towards for ``idleTicksBeforeRelease`` ticks is `released`, for the caller to
    /// free outside its lock: a full cache that only overwrites (it never grows) does not keep
    /// half its table again in memory (18 MB at a million keys).
    mutating func preparationTick(count: Int) -> (wanted: Int?, released: [UInt64]?) {
        let added = count > countAtLastTick
        countAtLastTick = count
        if prepared != nil {
            idleTicks = added ? 0 : idleTicks + 1
            guard idleTicks >= Self.idleTicksBeforeRelease else { return (nil, nil) }
            defer { prepared = nil; idleTicks = 0 }
            return (nil, prepared)
        }
        guard added, draining.isEmpty, count * 20 > current.count * 13 else { return (nil, nil) }
        return (nextSize, nil)
    }

    /// Keeps `table` (all zeros, from ``preparationTick(count:)``) for the next growth when
    /// it still has that growth's size.
    mutating func adoptPrepared(_ table: [UInt64]) {
        if prepared == nil && table.count == nextSize {
            prepared = table
            idleTicks = 0
        }
    }

    /// Every slot in one table of ``size`` slots, as a snapshot saves it (the draining table's
    /// slots placed into a copy of the current one).
    var flattened: [UInt64] {
        guard !draining.isEmpty else { return current }
        var table = current
        for s in draining where s != 0 { Self.place(s, in: &table) }
        return table
    }

    @inline(__always)
    static func home(fingerprint: UInt64, size: Int) -> Int {
        Int(truncatingIfNeeded: (fingerprint &* UInt64(size)) >> 32)
    }

    // MARK: Lookup

    /// The slot of the entry that `matches` (given an entry number) accepts among those with
    /// `fingerprint`, as a reference; nil when none.
    @inline(__always)
    func find(fingerprint: UInt64, _ matches: (Int) -> Bool) -> Int? {
        if let i = current.withUnsafeBufferPointer({ Self.probe($0, fingerprint: fingerprint, matches) }) { return i }
        guard !draining.isEmpty,
              let j = draining.withUnsafeBufferPointer({ Self.probe($0, fingerprint: fingerprint, matches) }) else { return nil }
        return current.count + j
    }

    @inline(__always)
    private static func probe(_ table: UnsafeBufferPointer<UInt64>, fingerprint: UInt64, _ matches: (Int) -> Bool) -> Int? {
        var i = home(fingerprint: fingerprint, size: table.count)
        while true {
            let s = table[i]
            if s == 0 { return nil }
            if s >> 32 == fingerprint && matches(Int(s & 0xFFFF_FFFF) - 1) { return i }
            i += 1
            if i == table.count { i = 0 }
        }
    }

    /// The entry number in slot `ref`.
    @inline(__always)
    func entryNumber(_ ref: Int) -> Int {
        Int((ref < current.count ? current[ref] : draining[ref - current.count]) & 0xFFFF_FFFF) - 1
    }

    // MARK: Changes

    /// Points slot `ref` at entry number `n` (its key's entry moved there).
    mutating func setEntryNumber(_ n: Int, at ref: Int) {
        if ref < current.count {
            current[ref] = (current[ref] >> 32) << 32 | UInt64(n + 1)
        } else {
            draining[ref - current.count] = (draining[ref - current.count] >> 32) << 32 | UInt64(n + 1)
        }
    }

    /// Empties slot `ref` (linear-probing deletion in its table).
    mutating func remove(_ ref: Int) {
        if ref < current.count { Self.deleteSlot(ref, in: &current) } else { Self.deleteSlot(ref - current.count, in: &draining) }
    }

    /// Adds the slot of a new key's entry `n`; `count` entries (this one included) are indexed.
    /// Starts a growth first when the current table would be more than 3/4 full, and moves a
    /// growth under way along.
    mutating func insert(fingerprint: UInt64, entryNumber n: Int, count: Int) {
        if count * 4 > current.count * 3 { startGrowth() }
        if !draining.isEmpty { drainStep() }
        Self.place(fingerprint << 32 | UInt64(n + 1), in: &current)
    }

    /// Ends a growth under way at once (before a resize or a snapshot of the table).
    mutating func finishGrowth() {
        while !draining.isEmpty { drainStep() }
    }

    /// Puts every slot into a table of `size` slots (the end of an open trims the table).
    mutating func resize(to size: Int) {
        finishGrowth()
        prepared = nil
        var table = [UInt64](repeating: 0, count: size)
        for s in current where s != 0 { Self.place(s, in: &table) }
        current = table
    }

    private mutating func startGrowth() {
        finishGrowth()   // only when inserts outran the draining (they cannot, at 32 per insert)
        let next = prepared?.count == nextSize ? prepared! : [UInt64](repeating: 0, count: nextSize)
        prepared = nil
        draining = current
        current = next
        drainEnd = draining.firstIndex(of: 0)!   // at most 3/4 full: an empty slot exists
        drainNext = drainEnd + 1 == draining.count ? 0 : drainEnd + 1
    }

    /// Moves the draining table's slots from `drainNext` on into the current one: at least
    /// ``slotsPerStep``, and on to the end of the run it is in.
    private mutating func drainStep() {
        var looked = 0
        while looked < Self.slotsPerStep || draining[drainNext] != 0 {
            if drainNext == drainEnd {
                draining = []
                return
            }
            let s = draining[drainNext]
            if s != 0 {
                Self.place(s, in: &current)
                draining[drainNext] = 0
            }
            drainNext = drainNext + 1 == draining.count ? 0 : drainNext + 1
            looked += 1
        }
    }

    @inline(__always)
    private static func place(_ s: UInt64, in table: inout [UInt64]) {
        let size = table.count
        var i = home(fingerprint: s >> 32, size: size)
        while table[i] != 0 {
            i += 1
            if i == size { i = 0 }
        }
        table[i] = s
    }

    /// Linear-probing deletion: shift later members of the run back so no probe stops early.
    private static func deleteSlot(_ hole: Int, in table: inout [UInt64]) {
        let size = table.count
        var hole = hole
        var i = hole + 1 == size ? 0 : hole + 1
        table[hole] = 0
        while table[i] != 0 {
            let home = home(fingerprint: table[i] >> 32, size: size)
            // Move slot i into the hole when its home is not in (hole, i].
            var distanceToHome = i - home, distanceToHole = i - hole
            if distanceToHome < 0 { distanceToHome += size }
            if distanceToHole < 0 { distanceToHole += size }
            if distanceToHome >= distanceToHole {
                table[hole] = table[i]
                table[i] = 0
                hole = i
            }
            i = i + 1 == size ? 0 : i + 1
        }
    }
}
