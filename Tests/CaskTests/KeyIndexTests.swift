import Testing
@testable import Cask

@Suite struct KeyIndexTests {
    func entry(_ n: Int) -> IndexEntry {
        IndexEntry(segment: UInt32(n % 7), offset: UInt32(n), storedLength: UInt32(n % 100), originalLength: UInt32(n % 100),
                   sequence: UInt64(n) << 20, writeTime: 1_800_000_000_000, expiry: Int64(n), accessTime: 1_800_000_000_000,
                   flags: 0, keyLength: 0)
    }

    @Test func matchesADictionaryUnderRandomInsertsUpdatesAndRemoves() {
        var index = KeyIndex()
        var model: [String: Int] = [:]
        var rng = SeededBytes(seed: 42)
        for step in 0..<200_000 {
            let key = "key-\(rng.next() % 5000)" + String(repeating: "x", count: Int(rng.next() % 40))
            switch rng.next() % 10 {
            case 0...5:
                let old = index.updateValue(entry(step), forKey: key)
                #expect((old.map { Int($0.offset) }) == model[key])
                model[key] = step
            default:
                let old = index.removeValue(forKey: key)
                #expect((old.map { Int($0.offset) }) == model[key])
                model[key] = nil
            }
            if step % 20_000 == 0 {
                #expect(index.count == model.count)
                for (k, v) in model { #expect(index.entry(forKey: k).map { Int($0.offset) } == v) }
            }
        }
        #expect(index.count == model.count)
        for (k, v) in model {
            let e = index.entry(forKey: k)
            #expect(e.map { Int($0.offset) } == v)
            #expect(e?.sequence == UInt64(v) << 20 && e?.expiry == Int64(v))
        }
        #expect(Set(index.all.map(\.key)) == Set(model.keys))
        #expect(index.entry(forKey: "absent") == nil)
    }

    @Test func timesKeepTheirPrecision() {
        var e = entry(1)
        e.accessTime = 1_800_000_123_456
        #expect(e.accessTime == 1_800_000_123_456)       // to the millisecond (issue 12)
        e.accessTime = Int64.max
        #expect(e.accessTime == IndexEntry.maximumTime)   // clamped, never wrapped
        let exact = IndexEntry(segment: 1, offset: 2, storedLength: 3, originalLength: 3, sequence: 1 << 40,
                               writeTime: 0, expiry: 1_800_000_000_123, accessTime: 0, flags: 0, keyLength: 1)
        #expect(exact.expiry == 1_800_000_000_123)
        #expect(exact.sequence == 1 << 40)
        #expect(MemoryLayout<IndexEntry>.stride == 48)
    }
}

extension IndexEntry: Equatable {
    public static func == (a: IndexEntry, b: IndexEntry) -> Bool {
        a.sequence == b.sequence && a.segment == b.segment && a.offset == b.offset
    }
}
