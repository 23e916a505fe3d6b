/// What every part of ``StoreState`` promises, and what holds between them: checked by the
/// model-based tests after every step, and available to any test.
extension StoreState {
    /// The first invariant that does not hold, or nil. Walks the whole index: for tests and
    /// debug checks, never on a caller's path.
    func invariantViolation() -> String? {
        if let problem = keys.invariantViolation() { return "key directory: \(problem)" }
        if let problem = limiter.invariantViolation() { return "limit controller: \(problem)" }
        commits.checkInvariants()
        guard !isClosed else { return nil }
        if let problem = segmentSet.invariantViolation() { return "segment set: \(problem)" }
        let usageBytes = segmentSet.liveBytes
        if usageBytes != keys.liveBytes { return "segments count \(usageBytes) live bytes, the key directory \(keys.liveBytes)" }
        let usageCount = usage.values.reduce(0) { $0 + $1.liveCount }
        if usageCount != index.count { return "segments count \(usageCount) live entries, the index holds \(index.count)" }
        var outside: IndexEntry?
        index.forEach { _, e in if outside == nil && segments[e.segment] == nil { outside = e } }
        if let outside { return "an index entry points into segment \(outside.segment), which is not open" }
        if segments[writer.id] == nil { return "the active segment \(writer.id) is not among the open segments" }
        if let problem = tail.invariantViolation() { return "log tail: \(problem)" }
        return nil
    }
}
