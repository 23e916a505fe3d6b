import CaskTesting
import Testing
@testable import Cask

/// ``SegmentUsages`` (the store's per-segment usage map, two sorted arrays) against a
/// `Dictionary` over seeded random inserts, updates and removals.
@Suite struct SegmentUsagesTests {
    @Test func agreesWithADictionary() {
        var rng = SplitMix(seed: 42)
        var map = SegmentUsages()
        var model: [UInt32: SegmentUsage] = [:]
        for step in 0..<20_000 {
            let id = UInt32(rng.next() % 64)
            switch rng.next() % 4 {
            case 0:
                let u = SegmentUsage(fileBytes: Int64(step), liveBytes: 0)
                map[id] = u
                model[id] = u
            case 1:
                map[id] = nil
                model[id] = nil
            default:
                map.update(id) { $0.liveBytes += 3; $0.liveCount += 1 }
                model[id]?.liveBytes += 3
                model[id]?.liveCount += 1
            }
        }
        #expect(map.keys == model.keys.sorted())
        for (id, u) in map { #expect(u.liveBytes == model[id]?.liveBytes && u.liveCount == model[id]?.liveCount && u.fileBytes == model[id]?.fileBytes) }
        #expect(map.count == model.count)
    }
}
