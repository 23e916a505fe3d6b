import Foundation
import CaskSupport
import Synchronization
import Cask

/// A ``SharedTier`` in this process's memory, for tests: the contract's reference (versions,
/// removals by prefix and tag, a history of changes with cursors) and switches that make it
/// fail (`isDown`) or lose its history (`restartEmpty()`). Several caches given one instance
/// behave as nodes sharing one Redis. Thread-safe.
public final class InMemorySharedTier: SharedTier {
    private struct State {
        var entries: [String: SharedEntry] = [:]
        /// Newest removal per key (a tombstone), prefix and tag.
        var removedKeys: [String: SharedVersion] = [:]
        var removedPrefixes: [String: SharedVersion] = [:]
        var removedTags: [String: SharedVersion] = [:]
        /// Every change applied, in order; a cursor is `epoch:index` (1-based).
        var history: [SharedChange] = []
        var epoch = UUID().uuidString
        var followers: [UUID: AsyncStream<SharedNotice>.Continuation] = [:]
        var down = false
        /// Claims of loads: token and when the lease ends.
        var claims: [String: (token: UInt64, until: ContinuousClock.Instant)] = [:]
        var lastToken: UInt64 = 0
    }

    private let state = Locked(State())

    public init() {}

    /// While true, every call throws (an outage), and followers hear nothing.
    public var isDown: Bool {
        get { state.withLock { $0.down } }
        set { state.withLock { $0.down = newValue } }
    }

    /// The changes applied so far.
    public var appliedChanges: [SharedChange] { state.withLock { $0.history } }

    /// The cursor after the last change applied: a node that followed everything holds it.
    public var currentCursor: String { state.withLock { "\($0.epoch):\($0.history.count)" } }

    /// Forgets everything (a Redis restarted empty): followers get
    /// ``SharedNotice/historyLost(cursor:)``.
    public func restartEmpty() {
        let (followers, cursor) = state.withLock { s -> ([AsyncStream<SharedNotice>.Continuation], String) in
            let followers = Array(s.followers.values)
            s = State(followers: s.followers, lastToken: s.lastToken)
            return (followers, "\(s.epoch):0")
        }
        for f in followers { f.yield(.historyLost(cursor: cursor)) }
    }

    struct Down: Error {}

    public func entry(forKey key: String) async throws -> SharedEntry? {
        try state.withLock { s in
            guard !s.down else { throw Down() }
            guard let e = s.entries[key], !Self.isRemoved(key, e, in: s) else { return nil }
            return e
        }
    }

    public func apply(_ change: SharedChange) async throws {
        let (followers, cursor) = try state.withLock { s -> ([AsyncStream<SharedNotice>.Continuation], String?) in
            guard !s.down else { throw Down() }
            guard Self.apply(change, to: &s) else { return ([], nil) }
            s.history.append(change)
            return (Array(s.followers.values), "\(s.epoch):\(s.history.count)")
        }
        for f in followers { f.yield(.change(change, cursor: cursor!)) }
    }

    public func changes(after cursor: String?) -> AsyncStream<SharedNotice> {
        let (stream, continuation) = AsyncStream<SharedNotice>.makeStream()
        let id = UUID()
        state.withLock { s in
            s.followers[id] = continuation
            defer { continuation.yield(.live(cursor: "\(s.epoch):\(s.history.count)")) }
            guard let cursor else { return }
            let parts = cursor.split(separator: ":")
            guard parts.count == 2, String(parts[0]) == s.epoch, let n = Int(parts[1]), n <= s.history.count else {
                continuation.yield(.historyLost(cursor: "\(s.epoch):\(s.history.count)"))
                return
            }
            for i in n..<s.history.count { continuation.yield(.change(s.history[i], cursor: "\(s.epoch):\(i + 1)")) }
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.followers.removeValue(forKey: id) } }
        return stream
    }

    public func claimLoad(of key: String, for lease: Duration) async throws -> UInt64? {
        try state.withLock { s in
            guard !s.down else { throw Down() }
            let now = ContinuousClock.now
            if let held = s.claims[key], held.until > now { return nil }
            s.lastToken += 1
            s.claims[key] = (s.lastToken, now + lease)
            return s.lastToken
        }
    }

    public func releaseLoad(of key: String, token: UInt64) async throws {
        try state.withLock { s in
            guard !s.down else { throw Down() }
            if s.claims[key]?.token == token { s.claims[key] = nil }
        }
    }

    /// Whether a claim of loading `key` is held now.
    public func isLoadClaimed(_ key: String) -> Bool {
        state.withLock { s in s.claims[key].map { $0.until > ContinuousClock.now } ?? false }
    }

    /// Applies `change` unless something newer covers it; whether it did.
    private static func apply(_ change: SharedChange, to s: inout State) -> Bool {
        switch change {
        case let .set(key, entry):
            if let old = s.entries[key], old.version >= entry.version { return false }
            if let removed = s.removedKeys[key], removed >= entry.version { return false }
            if isRemoved(key, entry, in: s) { return false }
            s.entries[key] = entry
        case let .remove(key, version):
            if let old = s.entries[key], old.version > version { return false }
            if let removed = s.removedKeys[key], removed >= version { return false }
            s.removedKeys[key] = version
            s.entries[key] = nil
        case let .removePrefix(prefix, version):
            s.removedPrefixes[prefix] = max(version, s.removedPrefixes[prefix] ?? version)
        case let .removeTag(tag, version):
            s.removedTags[tag] = max(version, s.removedTags[tag] ?? version)
        }
        return true
    }

    /// Whether a removal by prefix or tag covers `entry` of `key`.
    private static func isRemoved(_ key: String, _ entry: SharedEntry, in s: State) -> Bool {
        s.removedPrefixes.contains { key.hasPrefix($0.key) && entry.version <= $0.value }
            || entry.tags.contains { s.removedTags[$0].map { entry.version <= $0 } ?? false }
    }
}
