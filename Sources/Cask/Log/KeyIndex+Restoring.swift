import CCaskSupport
import Dispatch
import Synchronization

/// The check a restored index passes before it is used (``KeyIndex/init(restoring:expiries:keys:slots:seed:)``).
extension KeyIndex {
    /// Whether looking up each entry's key finds that very entry. Read-only, so split over the
    /// cores; the keys are hashed 16 at a time and their home slots prefetched, so that the
    /// table's cache misses overlap instead of following one another.
    func findsEveryEntryByItsKey() -> Bool {
        let n = count, chunks = n < 1 << 14 ? 1 : 8
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            if !findsEntries((n * c / chunks)..<(n * (c + 1) / chunks)) { failures.add(1, ordering: .relaxed) }
        }
        return failures.load(ordering: .relaxed) == 0
    }

    private func findsEntries(_ range: Range<Int>) -> Bool {
        let batch = 16
        return slotTable.current.withUnsafeBufferPointer { table in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: batch) { h in
                // No nested function here: one capturing `self` copies the index at each call.
                for start in stride(from: range.lowerBound, to: range.upperBound, by: batch) {
                    let end = min(range.upperBound, start + batch)
                    for i in start..<end {
                        let e = stored[i]
                        h[i - start] = keys.withKey(of: e) { hash($0) }
                        cask_prefetch(table.baseAddress! + SlotTable.home(fingerprint: h[i - start] >> 32, size: table.count))
                    }
                    for i in start..<end {
                        let e = stored[i]
                        guard let slot = keys.withKey(of: e, { find($0, hash: h[i - start]) }),
                              entryNumber(slot: slot) == i else { return false }
                    }
                }
                return true
            }
        }
    }

}
