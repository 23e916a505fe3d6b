/// The store's ``StoreState`` behind its mutex. Every acquisition first applies the uses a
/// ``RecordObserver`` reported (nothing to do, and one branch, without an observer).
final class StoreStateLock: Sendable {
    private let locked: Locked<StoreState>

    init(_ state: consuming StoreState) {
        locked = Locked(state)
    }

    /// Runs `body` with exclusive access to the state. Do not call back into the same lock.
    @inline(__always)
    func withLock<R, E: Error>(_ body: (inout StoreState) throws(E) -> R) throws(E) -> R {
        try locked.withLock { s throws(E) -> R in
            if s.observer != nil { s.applyObservedUses() }
            return try body(&s)
        }
    }
}
