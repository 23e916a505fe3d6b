import CCaskSupport
import CaskFormat

/// Inputs are deleted one at a time, in the plan's order (oldest first), each unlink durable
/// before the next. A crash, or a reader's listing, can therefore find any prefix of the inputs
/// gone and the rest still there. A tombstone dropped from the output must not leave an older
/// record of its key behind in an input that outlives it: it is dropped only when every older
/// record of its key in the inputs lies in an input deleted no later than its own.
extension Compactor {
    /// For each record of `listing` (same positions), whether it is a tombstone whose key has no
    /// older record in an input deleted after the tombstone's. Keys are compared by a 64-bit
    /// hash: a collision can only keep a tombstone that could have gone, never the reverse.
    static func tombstonesSafeToDeleteInOrder(_ listing: Listing) -> [Bool] {
        var safe = [Bool](repeating: false, count: listing.records.count)
        let hash = { (r: Kept) in listing.inputs[r.input].withKey(of: r) { cask_hash64($0.baseAddress, $0.count, 0) } }
        // Only keys with a tombstone matter: most passes (overwrites, no removals) list none.
        let tombstoneKeys = Set(listing.records.lazy.filter(\.isTombstone).map(hash))
        guard !tombstoneKeys.isEmpty else { return safe }
        var order: [(hash: UInt64, sequence: UInt64, record: Int)] = []
        var residency = InputResidency(listing.inputs)
        defer { residency.endPhase() }
        for (n, r) in listing.records.enumerated() {
            residency.read(r.input, upTo: r.offset)
            let h = hash(r)
            if tombstoneKeys.contains(h) { order.append((h, r.sequence, n)) }
        }
        order.sort { ($0.hash, $0.sequence) < ($1.hash, $1.sequence) }
        var start = 0
        while start < order.count {
            var end = start
            var latestDeletion = -1   // the last input (in deletion order) holding an older record
            while end < order.count && order[end].hash == order[start].hash {
                let r = listing.records[order[end].record]
                if r.isTombstone { safe[order[end].record] = latestDeletion <= r.input }
                latestDeletion = max(latestDeletion, r.input)
                end += 1
            }
            start = end
        }
        return safe
    }
}
