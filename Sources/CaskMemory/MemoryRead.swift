/// What ``MemoryCache/value(forKey:now:reading:)`` does with the value it finds, under the
/// shard's lock: a type rather than a closure, so that the call is direct and can be inlined
/// into the lookup (a closure was called indirectly, and the value was retained around the call).
@usableFromInline
package protocol MemoryRead {
    associatedtype Value
    associatedtype Result
    /// The lookup's result for `value`, last used at `previousUse` (milliseconds), and whether
    /// this use is to be recorded for ``MemoryCache/takeUses()``.
    func read(_ value: borrowing Value, previousUse: Int64) -> (result: Result, recordUse: Bool)
}

/// The plain lookup: the value itself, no use recorded.
@usableFromInline
struct ValueRead<Value>: MemoryRead {
    @inlinable init() {}

    @inlinable @inline(__always)
    func read(_ value: borrowing Value, previousUse: Int64) -> (result: Value, recordUse: Bool) { (copy value, false) }
}
