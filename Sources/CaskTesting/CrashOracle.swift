import Cask
import Foundation

/// A model of what a store may hold after a crash. Record every put and remove as it starts, say
/// when it returned successfully, and say when everything acknowledged so far became durable
/// (after `sync()` returned, or after each write in `.everyWrite` mode). After the crash,
/// ``violations(in:)`` lists every key whose value is not allowed:
///
/// a key may hold the value of its last durably acknowledged operation (absent after a remove),
/// or of any later operation, acknowledged or still in flight (a failed call may have reached the
/// disk); anything else — an older value, a deleted key come back, a value never written — is a
/// violation.
public final class CrashOracle: @unchecked Sendable {
    // @unchecked: mutable state is behind `lock`.
    private struct Operation {
        let value: Data?      // nil = remove
        var acknowledged = false
    }

    private let lock = NSLock()
    private var history: [String: [(index: Int, op: Operation)]] = [:]
    private var keyOfOperation: [Int: String] = [:]
    private var counter = 0
    private var durableThrough = -1
    private var lastAcknowledged = -1

    public init() {}

    /// Records a put (a value) or a remove (`nil`) that is about to start; returns its number.
    @discardableResult
    public func begin(_ key: String, _ value: Data?) -> Int {
        lock.withLock {
            counter += 1
            history[key, default: []].append((counter, Operation(value: value)))
            keyOfOperation[counter] = key
            return counter
        }
    }

    /// The operation returned successfully.
    public func acknowledge(_ operation: Int) {
        lock.withLock {
            if let key = keyOfOperation[operation], let i = history[key]?.lastIndex(where: { $0.index == operation }) {
                history[key]![i].op.acknowledged = true
            }
            lastAcknowledged = max(lastAcknowledged, operation)
        }
    }

    /// Everything acknowledged so far is durable.
    public func markDurable() { lock.withLock { durableThrough = lastAcknowledged } }

    /// Keys the model knows of.
    public var keys: [String] { lock.withLock { Array(history.keys) } }

    /// The values `key` may hold after a crash (`nil` in the set means "absent").
    public func allowedValues(_ key: String) -> [Data?] {
        lock.withLock {
            let ops = history[key] ?? []
            guard let d = ops.lastIndex(where: { $0.op.acknowledged && $0.index <= durableThrough }) else {
                return [nil] + ops.map(\.op.value)
            }
            return ops[d...].map(\.op.value)
        }
    }

    /// Every key whose value in `store` the model does not allow, with what was found. Keys the
    /// model never saw must be absent.
    /// With `evictable` (a store with limits or TTLs), any key may also be absent: the store
    /// may have evicted it, but never turned it into an older value.
    public func violations(in store: DiskStore, evictable: Bool = false) throws -> [String] {
        var problems: [String] = []
        let known = Set(keys)
        for key in known {
            let found = try store.value(forKey: key)
            let allowed = allowedValues(key) + (evictable ? [nil] : [])
            if !allowed.contains(where: { $0 == found }) {
                problems.append("\(key): found \(found.map { "\($0.count) bytes" } ?? "nothing"), allowed \(allowed.map { $0.map { "\($0.count) bytes" } ?? "absent" })")
            }
        }
        for key in store.keys() where !known.contains(key) { problems.append("\(key): never written") }
        return problems
    }
}
