/// Background work over many items (compaction's liveness check and index switch, eviction's
/// walk and evictions), under the store's lock in slices bounded by time, not by count.
///
/// A count cannot bound a slice: the same 256 liveness checks took 8 µs on a store that fits in
/// the processor's caches and 78 µs (269 µs at most) on a 1 M-key store whose index lookups
/// miss them (measured in `cask-harness churn`). A writer that arrives while a slice runs waits
/// for it, so the slice's length is the writer's worst wait on background work.
extension StoreStateLock {
    /// How long one slice holds the lock, at most about: a put that arrives while it runs waits
    /// this long in the worst case.
    static let sliceBudgetNanoseconds: UInt64 = 20_000

    /// Calls `step(&state, i)` for each `i` in `range`, in order, under the lock in slices of
    /// about ``sliceBudgetNanoseconds`` (at least one step each), each taken with
    /// ``withSlice(_:)`` so that waiting callers go first. `between` runs outside the lock
    /// before each slice (a cancellation check). Stops early when `step` returns false, and
    /// returns the index of the first step not taken (`range.upperBound` when all were).
    @discardableResult
    func forEachInSlices<E: Error>(_ range: Range<Int>, between: () throws(E) -> Void,
                                   _ step: (inout StoreState, Int) -> Bool) throws(E) -> Int {
        var next = range.lowerBound
        var stopped = false
        while next < range.upperBound && !stopped {
            try between()
            withSlice { s in
                let deadline = SliceDeadline(budget: Self.sliceBudgetNanoseconds)
                repeat {
                    if !step(&s, next) { stopped = true; return }
                    next += 1
                } while next < range.upperBound && !deadline.isPast(after: next - range.lowerBound)
            }
        }
        return next
    }
}

extension StoreStateLock {
    /// ``forEachInSlices(_:between:_:)`` with nothing to do between slices.
    @discardableResult
    func forEachInSlices(_ range: Range<Int>, _ step: (inout StoreState, Int) -> Bool) -> Int {
        forEachInSlices(range, between: { () throws(Never) in }, step)
    }
}

extension StoreStateLock {
    /// Calls `step` on every entry number of the index, in ranges of at most `entriesPerStep`
    /// from the last entry to the first, in slices of about ``sliceBudgetNanoseconds`` (at least
    /// one step each) taken with ``withSlice(_:)``. `endSlice` runs under the lock as each slice
    /// ends, and `afterSlice` gets its result outside the lock. Backwards, so that `step` may
    /// remove entries in its range: the last entry fills a removed one's hole, and it comes from
    /// the part already walked, or was installed since. Stops when the store closes.
    func walkIndexBackwards<T>(entriesPerStep: Int, _ step: (inout StoreState, Range<Int>) -> Void,
                               endSlice: (inout StoreState) -> T, afterSlice: (T) -> Void) {
        var cursor = Int.max
        while cursor > 0 {
            let ended = withSlice { s -> T? in
                guard !s.isClosed else { cursor = 0; return nil }
                cursor = min(cursor, s.index.count)
                let deadline = SliceDeadline(budget: Self.sliceBudgetNanoseconds)
                var steps = 0
                while cursor > 0 {
                    let low = max(0, cursor - entriesPerStep)
                    step(&s, low..<cursor)
                    cursor = low
                    steps += 8   // a step of many entries: the deadline is read after each
                    if deadline.isPast(after: steps) { break }
                }
                return endSlice(&s)
            }
            if let ended { afterSlice(ended) }
        }
    }
}
