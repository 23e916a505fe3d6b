import Synchronization

/// One duration Cask measured: what was timed, and how long it took.
///
/// Delivered to the observers registered with ``DiskStore/observeTimings(_:)`` or
/// ``CaskCache/observeTimings(_:)``. Nothing is timed while no observer is registered.
public struct CaskTiming: Sendable, Equatable {
    /// What was timed.
    public enum Operation: String, Sendable, CaseIterable {
        /// A loader run by ``CaskCache``'s get-or-load that returned a value (cache-level only).
        case load
        /// A loader that threw (cache-level only).
        case failedLoad
        /// One `fdatasync` (`F_FULLFSYNC` on Darwin) of a segment, hint or snapshot file,
        /// failed or not.
        case fileSync
        /// One `fsync` of the store's folder (after a create, rename or unlink), failed or not.
        case directorySync
        /// One compaction pass, from choosing its inputs to deleting them (the
        /// ``CompactionReport/seconds`` of the pass).
        case compaction
    }

    /// What was timed.
    public var operation: Operation
    /// How long it took (wall-clock, from `ContinuousClock`).
    public var duration: Duration

    /// A timing of `operation` that took `duration`.
    public init(_ operation: Operation, _ duration: Duration) {
        self.operation = operation
        self.duration = duration
    }
}

/// The timing observers of one store, and the one check that keeps timing free while there are
/// none: a relaxed atomic load before any clock is read. Thread-safe.
final class TimingObservers: Sendable {
    private let count = Atomic<Int>(0)
    private let observers = Locked<(next: Int, all: [Int: @Sendable (CaskTiming) -> Void])>((0, [:]))

    /// Whether any observer is registered (a hint: one may come or go right after).
    @inline(__always) var isObserved: Bool { count.load(ordering: .relaxed) > 0 }

    /// Registers `observer`; returns the number that ``remove(_:)`` takes.
    func add(_ observer: @escaping @Sendable (CaskTiming) -> Void) -> Int {
        observers.withLock { o in
            defer { o.next += 1 }
            o.all[o.next] = observer
            count.store(o.all.count, ordering: .relaxed)
            return o.next
        }
    }

    /// Unregisters the observer numbered `id` (nothing if it is gone already).
    func remove(_ id: Int) {
        observers.withLock { o in
            o.all[id] = nil
            count.store(o.all.count, ordering: .relaxed)
        }
    }

    /// Hands `timing` to every observer, outside this object's lock.
    func deliver(_ timing: CaskTiming) {
        let all = observers.withLock { Array($0.all.values) }
        for observer in all { observer(timing) }
    }

    /// Runs `body`, timing it as `operation` when observed (failed or not).
    @inline(__always)
    func time<R, E: Error>(_ operation: CaskTiming.Operation, _ body: () throws(E) -> R) throws(E) -> R {
        guard isObserved else { return try body() }
        let started = ContinuousClock.now
        defer { deliver(CaskTiming(operation, ContinuousClock.now - started)) }
        return try body()
    }
}

/// A registration made by ``DiskStore/observeTimings(_:)`` or ``CaskCache/observeTimings(_:)``:
/// the observer is called until ``cancel()`` is called or this object is released.
/// Thread-safe.
public final class TimingObservation: Sendable {
    private let observers: TimingObservers
    private let id: Int

    init(_ observers: TimingObservers, id: Int) {
        self.observers = observers
        self.id = id
    }

    /// Stops the calls. Idempotent; a call already under way may still finish after it returns.
    public func cancel() { observers.remove(id) }

    deinit { observers.remove(id) }
}
