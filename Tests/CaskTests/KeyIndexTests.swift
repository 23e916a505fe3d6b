import Testing
import CaskFormat
@testable import Cask

@Suite struct KeyIndexTests {
    /// Entry `n`: every field derived from `n`; every third one has an expiry, every fifth is
    /// compressed, every seventh pinned.
    func entry(_ n: Int, expiries: Bool = true) -> IndexEntry {
        var flags: UInt8 = 0
        if n % 5 == 0 { flags |= Format.RecordFlag.compressed }
        if n % 7 == 0 { flags |= Format.RecordFlag.pinned }
        return IndexEntry(segment: UInt32(n % 7), offset: UInt32(n), storedLength: UInt32(n % 100), sequence: UInt64(n) << 20,
                          expiry: expiries && n % 3 == 0 ? 1_800_000_000_000 + Int64(n) : 0, accessTime: 1_700_000_000_000 + Int64(n),
                          flags: flags, keyLength: 0)
    }

    /// What the index must give back for entry `n` stored under `key`.
    func matches(_ e: IndexEntry?, _ n: Int, key: String, expiries: Bool = true) -> Bool {
        guard let e else { return false }
        var expected = entry(n, expiries: expiries)
        expected.keyOffset = e.keyOffset
        expected.keyArena = e.keyArena
        expected.keyLength = UInt16(key.utf8.count)
        return e == expected
    }

    @Test(arguments: [true, false])
    func matchesADictionaryUnderRandomInsertsUpdatesAndRemoves(expiries: Bool) {
        var index = KeyIndex()
        var model: [String: Int] = [:]
        var rng = SeededBytes(seed: 42)
        for step in 0..<200_000 {
            let key = "key-\(rng.next() % 5000)" + String(repeating: "x", count: Int(rng.next() % 40))
            switch rng.next() % 10 {
            case 0...4:
                let old = index.updateValue(entry(step, expiries: expiries), forKey: key)
                #expect((old.map { Int($0.offset) }) == model[key])
                model[key] = step
            case 5:
                // A read moves the access time in place; the rest of the entry stays.
                let touched = withUTF8(key) { k in index.withEntry(forKey: k) { $0.accessTime += 1 } }
                #expect((touched != nil) == (model[key] != nil))
                withUTF8(key) { k in _ = index.withEntry(forKey: k) { $0.accessTime -= 1 } }
            default:
                let old = index.removeValue(forKey: key)
                #expect((old.map { Int($0.offset) }) == model[key])
                model[key] = nil
            }
            if step % 20_000 == 0 {
                #expect(index.count == model.count)
                for (k, v) in model { #expect(matches(index.entry(forKey: k), v, key: k, expiries: expiries)) }
            }
        }
        index.trimExcessCapacity()
        #expect(index.count == model.count)
        for (k, v) in model { #expect(matches(index.entry(forKey: k), v, key: k, expiries: expiries)) }
        #expect(Set(index.all.map(\.key)) == Set(model.keys))
        #expect(index.entry(forKey: "absent") == nil)
    }

    /// Growth is incremental (SlotTable): while the old table drains into the new one, every
    /// key is found, updated and removed in whichever table holds it, removals by entry
    /// number move the right slot, and the table a snapshot saves holds every key once.
    @Test func everyKeyStaysReachableWhileTheTableGrowsInSteps() {
        var index = KeyIndex()
        var model: [String: Int] = [:]
        var rng = SeededBytes(seed: 7)
        var sawGrowth = 0
        for step in 0..<300_000 {
            let key = "g-\(rng.next() % 400_000)"
            switch rng.next() % 8 {
            case 0...4:
                let old = index.updateValue(entry(step), forKey: key)
                #expect((old.map { Int($0.offset) }) == model[key])
                model[key] = step
            case 5:
                let old = index.removeValue(forKey: key)
                #expect((old.map { Int($0.offset) }) == model[key])
                model[key] = nil
            case 6 where index.count > 0:
                let n = Int(rng.next() % UInt64(index.count))
                let k = index.key(of: index.entry(at: n))
                let removed = index.removeEntry(at: n)
                #expect(Int(removed.offset) == model[k])
                model[k] = nil
            default:
                #expect((index.entry(forKey: key).map { Int($0.offset) }) == model[key])
            }
            if index.slotTable.isGrowing {
                sawGrowth += 1
                if sawGrowth % 997 == 0 {   // mid-growth: every key, and a snapshot's table
                    #expect(index.count == model.count)
                    for (k, v) in model { #expect(matches(index.entry(forKey: k), v, key: k)) }
                    let (slots, _) = index.table
                    #expect(slots.filter { $0 != 0 }.count == index.count)
                }
            }
        }
        #expect(sawGrowth > 1000, "growths under way for \(sawGrowth) steps")
        index.trimExcessCapacity()
        #expect(!index.slotTable.isGrowing && index.count == model.count)
        for (k, v) in model { #expect(matches(index.entry(forKey: k), v, key: k)) }
    }

    /// Once more than half of the key bytes (and over 1 MiB) are garbage, the keys move to the
    /// other arena a few at a time with each change (KeyStore), never all in one: every key stays
    /// reachable throughout, and the old arena is freed at the end.
    @Test func keysMoveToTheOtherArenaInStepsAfterAMassRemoval() {
        var index = KeyIndex()
        var model: [String: Int] = [:]
        func key(_ n: Int) -> String { "key-\(n)-" + String(repeating: "y", count: n % 50) }
        for n in 0..<60_000 { index.updateValue(entry(n), forKey: key(n)); model[key(n)] = n }
        let full = index.keys.count
        var next = 60_000, migratingSteps = 0
        // Remove 70% (in a scattered order), with a new key and an overwrite every tenth step.
        for (i, n) in (0..<60_000).map({ ($0 * 7_919) % 60_000 }).enumerated() where n % 10 < 7 {
            #expect(index.removeValue(forKey: key(n)) != nil)
            model[key(n)] = nil
            if i % 10 == 0 {
                index.updateValue(entry(next), forKey: key(next)); model[key(next)] = next; next += 1
                let k = key((n + 3) % 60_000)
                if model[k] != nil { index.updateValue(entry(next), forKey: k); model[k] = next; next += 1 }
            }
            if index.keys.isMigrating {
                migratingSteps += 1
                if migratingSteps % 500 == 1 {   // everything reachable in the middle of a migration
                    for (k, v) in model where !matches(index.entry(forKey: k), v, key: k) { Issue.record("lost \(k) while migrating"); return }
                }
            }
        }
        #expect(migratingSteps > 100, "the keys moved in steps, not at once (\(migratingSteps) changes)")
        // Overwrites alone carry a migration to its end.
        while index.keys.isMigrating, let k = model.keys.first {
            index.updateValue(entry(next), forKey: k); model[k] = next; next += 1
        }
        #expect(index.count == model.count)
        for (k, v) in model where !matches(index.entry(forKey: k), v, key: k) { Issue.record("lost \(k)"); break }
        // The old arena is gone: without it being freed, both arenas would hold more than `full`.
        #expect(index.keys.count < full * 6 / 10 && index.liveKeyBytes <= index.keys.count, "\(index.keys.count) of \(full), live \(index.liveKeyBytes), steps \(migratingSteps)")
        #expect(Set(index.all.map(\.key)) == Set(model.keys))
    }

    /// A cache evicting and inserting keys of one length reuses the places removed keys left in
    /// the key arena (FreeKeySlots): the arena never grows, so it never has to be compacted.
    @Test func keysOfOneLengthReuseTheArenaInsteadOfGrowingIt() {
        var index = KeyIndex()
        func key(_ n: Int) -> String { "k" + String(repeating: "0", count: 15 - String(n).count) + String(n) }
        for n in 0..<10_000 { index.updateValue(entry(n), forKey: key(n)) }
        let arena = index.keys.count
        for n in 10_000..<200_000 {
            #expect(index.removeValue(forKey: key(n - 10_000)) != nil)
            index.updateValue(entry(n), forKey: key(n))
        }
        #expect(index.keys.count == arena && index.liveKeyBytes == arena)
        for n in 190_000..<200_000 where !matches(index.entry(forKey: key(n)), n, key: key(n)) {
            Issue.record("entry \(n) lost its key")
            break
        }
    }

    @Test func timesKeepTheirPrecision() {
        var index = KeyIndex()
        var e = entry(1)
        e.accessTime = 1_800_000_123_456
        #expect(e.accessTime == 1_800_000_123_456)       // to the millisecond (issue 12)
        e.accessTime = Int64.max
        #expect(e.accessTime == IndexEntry.maximumTime)   // clamped, never wrapped
        let exact = IndexEntry(segment: 1, offset: 2, storedLength: 3, sequence: UInt64.max - 1,
                               expiry: IndexEntry.maximumTime, accessTime: IndexEntry.maximumTime - 1,
                               flags: Format.RecordFlag.pinned | Format.RecordFlag.compressed, keyLength: 1)
        index.updateValue(exact, forKey: "k")
        var back = index.entry(forKey: "k")
        back?.keyOffset = 0
        #expect(back == exact)
        #expect(MemoryLayout<StoredIndexEntry>.stride == 32)
    }

    /// The table grows by half, not by doubling, and an open ends with the arrays trimmed: 1M
    /// 16-byte keys without expiries then take at most 32 + 16 + 8 / 0.5 bytes a key, plus at
    /// most one unused chunk of entries (512 KiB) and of key bytes (256 KiB).
    @Test func memoryPerKeyStaysWithinTheBound() {
        var index = KeyIndex()
        let n = 300_000
        for i in 0..<n { index.updateValue(entry(i, expiries: false), forKey: key(i)) }
        for i in (n - 20_000)..<n { index.removeValue(forKey: key(i)) }   // leaves a spare chunk behind
        for i in (n - 20_000)..<n { index.updateValue(entry(i, expiries: false), forKey: key(i)) }
        index.trimExcessCapacity()
        let slack = Double((512 + 256) << 10)
        let perKey = Double(index.memoryBytes) / Double(n)
        #expect(perKey <= 64 + slack / Double(n), "\(perKey) bytes a key")
        // One expiry brings the array beside the entries: 8 bytes a key more (and its chunk).
        index.updateValue(entry(3), forKey: key(3))
        #expect(Double(index.memoryBytes) / Double(n) <= 64 + 8 + (slack + Double(128 << 10)) / Double(n))
        #expect(index.entry(forKey: key(3))?.expiry == 1_800_000_000_003)
        #expect(index.entry(forKey: key(6))?.expiry == 0)
    }

    /// A 16-byte key for `i`.
    func key(_ i: Int) -> String {
        let digits = String(i)
        return "key-" + String(repeating: "0", count: 12 - digits.count) + digits
    }
}
