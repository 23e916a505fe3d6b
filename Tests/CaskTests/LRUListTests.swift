import CaskTesting
import Testing
@testable import Cask
@testable import CaskMemory

/// The memory shard's own hash table (``LRUList``) against a `Dictionary` and an array in LRU
/// order, with hashes chosen to collide (few homes, one fingerprint: every lookup walks a long
/// run and compares keys), over seeded random inserts, overwrites, removals and LRU evictions
/// that grow the table and shift runs back on deletion.
@Suite struct LRUListTests {
    @Test(arguments: [UInt64(1), 7, 1 << 20])
    func tableAgreesWithADictionaryUnderCollidingHashes(homes: UInt64) {
        var rng = SplitMix(seed: homes)
        var list = LRUList<Int>()
        var model: [String: Int] = [:]
        var order: [String] = []   // most recently used first
        func hash(_ key: String) -> UInt64 { (UInt64(key.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude) % homes) << 8 }
        for step in 0..<20_000 {
            let key = "k\(rng.next() % 3000)"
            switch rng.next() % 10 {
            case 0..<6:
                list.set(key, hash: hash(key), step, cost: 1, now: 0, stamp: UInt64(step))
                model[key] = step
                order.removeAll { $0 == key }
                order.insert(key, at: 0)
            case 6..<8:
                #expect(list.remove(key, hash: hash(key))?.value == model.removeValue(forKey: key), "step \(step)")
                order.removeAll { $0 == key }
            default:
                let removed = list.removeLeastRecentlyUsed()
                #expect(removed?.key == order.last, "step \(step)")
                if let last = order.popLast() { model[last] = nil }
            }
            if step % 997 == 0 {
                for (k, v) in model {
                    let i = list.position(of: k, hash: hash(k))
                    #expect(i.map { list.entries[Int($0)].value } == v, "step \(step) key \(k)")
                }
                #expect(list.count == model.count)
            }
        }
    }
}
