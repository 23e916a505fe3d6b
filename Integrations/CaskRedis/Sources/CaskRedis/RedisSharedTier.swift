import Foundation
import Cask

/// A ``SharedTier`` on Redis 6.2 or later (or Valkey): entries as hashes, each change applied
/// by a Lua script that checks versions and appends to a history stream, which every node
/// follows (`XREAD BLOCK` on a connection of its own) to remove the local copies other nodes'
/// changes make stale. What it stores is in format-spec.md ("Shared tier on Redis").
///
/// ```swift
/// var options = CacheOptions()
/// options.sharedTier = RedisSharedTier(RedisConfiguration(host: "127.0.0.1", port: 6379))
/// let cache = try CaskCache(directory: "/var/cache/app", options: options)
/// ```
///
/// Thread-safe. Every call may throw ``RedisClientError`` (the cache answers from its local
/// layers then). Call ``close()`` when done; the cache does not own the tier.
public final class RedisSharedTier: SharedTier {
    let configuration: RedisConfiguration
    let commands: any RedisCommandSending
    let names: RedisNames

    public init(_ configuration: RedisConfiguration = RedisConfiguration()) {
        self.configuration = configuration
        self.commands = RedisClient(configuration: configuration)
        self.names = RedisNames(prefix: configuration.keyPrefix)
    }

    public func entry(forKey key: String) async throws -> SharedEntry? {
        let reply = try await eval(RedisScripts.read, keys: [names.entry(key), names.prefixes, names.tags], arguments: [Array(key.utf8)])
        if case .null = reply { return nil }
        guard let f = reply.elements, f.count == 5, let ver = f[0].string.flatMap(SharedVersion.init), let value = f[1].bytes,
              let fresh = f[2].string.flatMap({ Int64($0) }), let expiry = f[3].string.flatMap({ Int64($0) }),
              let tagText = f[4].bytes, let tags = try? JSONDecoder().decode([String].self, from: Data(tagText)),
              Self.isTime(fresh), Self.isTime(expiry) else {
            return nil   // not in Cask's format (another client wrote it): a miss, never a value
        }
        return SharedEntry(value: Data(value), freshUntil: fresh, expiry: expiry, tags: tags, version: ver)
    }

    /// - Throws: ``SharedTierRefusal`` when Redis answers with an error (the change is then
    ///   dropped, not retried); ``RedisClientError`` for an outage.
    /// How long (ms) Redis keeps `entry`: until its expiry, and at most `retention`.
    static func lifetime(of entry: SharedEntry, retention: Int64) -> Int64 {
        guard entry.expiry != 0 else { return retention }
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let left = entry.expiry.subtractingReportingOverflow(now)
        return left.overflow ? retention : max(1, min(retention, left.partialValue))
    }

    /// Whether `ms` is 0 (none) or a time from 1970 to the year 9999 (ms since 1970).
    static func isTime(_ ms: Int64) -> Bool { ms >= 0 && ms <= 253_402_300_799_999 }

    public func apply(_ change: SharedChange) async throws {
        do { try await applyOnce(change) } catch RedisClientError.server(let message) {
            // Errors that pass (loading, busy, a replica, out of memory) are retried.
            let transient = ["LOADING", "BUSY", "TRYAGAIN", "READONLY", "MASTERDOWN", "OOM", "CLUSTERDOWN", "NOAUTH", "WRONGPASS",
                             "MISCONF", "NOREPLICAS", "NOSCRIPT"]
            if transient.contains(where: { message.hasPrefix($0) }) { throw RedisClientError.server(message) }
            throw SharedTierRefusal(reason: message)
        }
    }

    private func applyOnce(_ change: SharedChange) async throws {
        let history = Array("\(configuration.historyLength)".utf8)
        let retention = max(1, min(configuration.removalRetention.components.seconds, 315_360_000) * 1000)   // at most 10 years
        switch change {
        case let .set(key, e):
            let tags = try JSONEncoder().encode(e.tags)
            _ = try await eval(RedisScripts.set, keys: [names.entry(key), names.prefixes, names.tags, names.history],
                               arguments: [Array(key.utf8), Array(e.version.description.utf8), Array(e.value), Array("\(e.freshUntil)".utf8),
                                           Array("\(e.expiry)".utf8), Array(tags), history, Array("\(Self.lifetime(of: e, retention: retention))".utf8)])
        case let .remove(key, v):
            _ = try await eval(RedisScripts.remove, keys: [names.entry(key), names.prefixes, names.tags, names.history],
                               arguments: [Array(key.utf8), Array(v.description.utf8), history, Array("\(retention)".utf8)])
        case let .removePrefix(prefix, v):
            try await removeAll(prefix, version: v, in: names.prefixes, op: "prefix", retention: retention, history: history)
        case let .removeTag(tag, v):
            try await removeAll(tag, version: v, in: names.tags, op: "tag", retention: retention, history: history)
        }
    }

    public func changes(after cursor: String?) -> AsyncStream<SharedNotice> {
        let (stream, continuation) = AsyncStream<SharedNotice>.makeStream(bufferingPolicy: .unbounded)
        let follower = RedisFollower(configuration: configuration, names: names, continuation: continuation)
        // Off Swift's pool (a queue of its own), as the cache's own following is: a pool
        // whose threads the app holds does not stall the reads of the history.
        let task = Task.detached(executorPreference: SharedTierExecutor(label: "cask.redis.follower")) { await follower.run(after: cursor) }
        continuation.onTermination = { _ in task.cancel(); follower.close() }
        return stream
    }

    /// Claims `key`'s load with `SET … PX` (lease in ms, 1 ms to a day) under a token that
    /// grows (a counter, at least this machine's clock in µs); nil while a claim is held. See
    /// format-spec.md.
    public func claimLoad(of key: String, for lease: Duration) async throws -> UInt64? {
        let ms = max(1, min(lease.components.seconds, 86_400) * 1000 + lease.components.attoseconds / 1_000_000_000_000_000)
        let now = Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down))
        let reply = try await eval(RedisScripts.claimLoad, keys: [names.claim(key), names.claimTokens],
                                   arguments: [Array("\(ms)".utf8), Array("\(now)".utf8)])
        guard case .integer(let token) = reply else { throw RedisClientError.server("unexpected reply to a claim: \(reply)") }
        return token > 0 ? UInt64(token) : nil
    }

    public func releaseLoad(of key: String, token: UInt64) async throws {
        _ = try await eval(RedisScripts.releaseLoad, keys: [names.claim(key)], arguments: [Array("\(token)".utf8)])
    }

    /// A plain `GET` on the tier's connection: the benchmark's baseline for a read through it.
    @_spi(Benchmarks)
    public func plainGET(_ key: String) async throws -> [UInt8]? {
        try await commands.send([Array("GET".utf8), Array(key.utf8)], timeout: configuration.commandTimeout).bytes
    }

    /// Closes the tier's command connection (followers end with their streams).
    public func close() { commands.close() }

    private func removeAll(_ name: String, version: SharedVersion, in hash: [UInt8], op: String, retention: Int64, history: [UInt8]) async throws {
        let oldest = SharedVersion(microseconds: max(0, version.microseconds - retention * 1000), node: 0)
        _ = try await eval(RedisScripts.removeAll, keys: [hash, names.history],
                           arguments: [Array(name.utf8), Array(version.description.utf8), history, Array(op.utf8), Array(oldest.description.utf8)])
    }

    private func eval(_ script: String, keys: [[UInt8]], arguments: [[UInt8]]) async throws -> RESPValue {
        try await commands.send([Array("EVAL".utf8), Array(script.utf8), Array("\(keys.count)".utf8)] + keys + arguments,
                                timeout: configuration.commandTimeout)
    }
}

/// The Redis keys of one cache (see format-spec.md).
struct RedisNames: Sendable {
    let prefix: String
    func entry(_ key: String) -> [UInt8] { Array((prefix + "v:").utf8) + Array(key.utf8) }
    var prefixes: [UInt8] { Array((prefix + "removed:prefixes").utf8) }
    var tags: [UInt8] { Array((prefix + "removed:tags").utf8) }
    var history: [UInt8] { Array((prefix + "changes").utf8) }
    var epoch: [UInt8] { Array((prefix + "epoch").utf8) }
    func claim(_ key: String) -> [UInt8] { Array((prefix + "load:").utf8) + Array(key.utf8) }
    var claimTokens: [UInt8] { Array((prefix + "load-tokens").utf8) }
}
