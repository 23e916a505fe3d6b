import Foundation
import Cask

/// Follows a cache's history stream on a connection of its own and reports each change as a
/// ``SharedNotice``. A cursor is `epoch/stream-id`; the epoch is a random name the first node
/// stores in Redis (`SET NX`), so a Redis restarted empty has a new one, and a cursor from
/// before is reported as a lost history. So is a cursor older than what the stream trimmed.
/// After a lost connection it reconnects with backoff and resumes after the last change it
/// reported, exactly.
final class RedisFollower: Sendable {
    private let configuration: RedisConfiguration
    private let names: RedisNames
    private let continuation: AsyncStream<SharedNotice>.Continuation
    private let client: RedisClient
    /// How long one `XREAD` blocks on the server (ms).
    static let blockMilliseconds = 1_000

    init(configuration: RedisConfiguration, names: RedisNames, continuation: AsyncStream<SharedNotice>.Continuation) {
        self.configuration = configuration
        self.names = names
        self.continuation = continuation
        self.client = RedisClient(configuration: configuration)
    }

    func close() { client.close() }

    func run(after cursor: String?) async {
        var position = cursor.flatMap(Cursor.init)
        var failures = 0
        while !Task.isCancelled {
            do {
                position = try await resume(from: position)
                failures = 0
                while !Task.isCancelled { position = try await readChanges(after: position!) }
            } catch {
                continuation.yield(.interrupted)
                failures += 1
                let ms = min(2_000.0, 25.0 * pow(2, Double(min(failures - 1, 7)))) * Double.random(in: 0.5...1)
                try? await Task.sleep(for: .milliseconds(Int(ms)))
            }
        }
        continuation.finish()
    }

    /// Where to go on from `position`: the same place when the history still holds what
    /// follows it, else the stream's end, reporting the loss. Then reports `live`.
    private func resume(from position: Cursor?) async throws -> Cursor {
        let epoch = try await currentEpoch()
        let last = try await lastID()
        guard let position else {
            let start = Cursor(epoch: epoch, id: last)
            continuation.yield(.live(cursor: start.text))
            return start
        }
        let trimmed = position.epoch == epoch ? try await trimmedPast(position.id) : true
        if trimmed {
            let start = Cursor(epoch: epoch, id: last)
            continuation.yield(.historyLost(cursor: start.text))
            continuation.yield(.live(cursor: start.text))
            return start
        }
        continuation.yield(.live(cursor: position.text))
        return position
    }

    private func readChanges(after position: Cursor) async throws -> Cursor {
        let reply = try await send(["XREAD", "COUNT", "512", "BLOCK", "\(Self.blockMilliseconds)", "STREAMS"], names.history, position.id,
                                   timeout: configuration.commandTimeout + .milliseconds(Self.blockMilliseconds))
        var position = position
        for entry in Self.streamEntries(reply) {
            position = Cursor(epoch: position.epoch, id: entry.id)
            if let change = Self.change(entry.fields) { continuation.yield(.change(change, cursor: position.text)) }
        }
        return position
    }

    /// The epoch's name, set now when Redis holds none.
    private func currentEpoch() async throws -> String {
        _ = try await send(["SET"], names.epoch, UUID().uuidString, "NX", timeout: configuration.commandTimeout)
        guard let epoch = try await send(["GET"], names.epoch, timeout: configuration.commandTimeout).string else {
            throw RedisClientError.unexpectedReply("no epoch")
        }
        return epoch
    }

    /// The stream's last entry's id ("0-0" when empty).
    private func lastID() async throws -> String {
        let reply = try await send(["XREVRANGE"], names.history, "+", "-", "COUNT", "1", timeout: configuration.commandTimeout)
        return Self.streamList(reply).first?.id ?? "0-0"
    }

    /// Whether the stream deleted entries after `id` (`max-deleted-entry-id`, Redis 7).
    private func trimmedPast(_ id: String) async throws -> Bool {
        let reply: RESPValue
        do { reply = try await send(["XINFO", "STREAM"], names.history, timeout: configuration.commandTimeout) } catch RedisClientError.server {
            return id != "0-0"   // no stream: lost unless nothing had been written
        }
        guard let fields = reply.elements else { return true }
        var i = 0
        while i + 1 < fields.count {
            if fields[i].string == "max-deleted-entry-id", let deleted = fields[i + 1].string { return Self.isAfter(deleted, id) }
            i += 2
        }
        return false
    }

    private func send(_ words: [String], _ key: [UInt8], _ rest: String..., timeout: Duration) async throws -> RESPValue {
        try await client.send(words.map { Array($0.utf8) } + [key] + rest.map { Array($0.utf8) }, timeout: timeout)
    }

    /// Whether stream id `a` comes after `b` ("ms-seq").
    static func isAfter(_ a: String, _ b: String) -> Bool {
        func parts(_ s: String) -> (UInt64, UInt64) {
            let p = s.split(separator: "-")
            return (UInt64(p.first ?? "") ?? 0, p.count > 1 ? UInt64(p[1]) ?? 0 : 0)
        }
        return parts(a) > parts(b)
    }

    /// The entries of an `XREAD` reply (a RESP3 map or a RESP2 array of [stream, entries]).
    static func streamEntries(_ reply: RESPValue) -> [(id: String, fields: [RESPValue])] {
        guard let top = reply.elements else { return [] }
        if case .map = reply { return top.count >= 2 ? streamList(top[1]) : [] }
        return top.flatMap { stream in (stream.elements?.count ?? 0) >= 2 ? streamList(stream.elements![1]) : [] }
    }

    static func streamList(_ value: RESPValue) -> [(id: String, fields: [RESPValue])] {
        (value.elements ?? []).compactMap { e in
            guard let pair = e.elements, pair.count == 2, let id = pair[0].string, let fields = pair[1].elements else { return nil }
            return (id, fields)
        }
    }

    /// A history entry's change; nil for one that is not in Cask's format (skipped).
    static func change(_ fields: [RESPValue]) -> SharedChange? {
        var map: [String: String] = [:]
        var i = 0
        while i + 1 < fields.count { map[fields[i].string ?? ""] = fields[i + 1].string; i += 2 }
        guard let op = map["op"], let arg = map["arg"], let version = map["ver"].flatMap(SharedVersion.init) else { return nil }
        switch op {
        // A set reports no entry: the nodes only drop their copies and read the new one when asked.
        case "set": return .set(key: arg, entry: SharedEntry(value: Data(), freshUntil: 0, expiry: 0, tags: [], version: version))
        case "remove": return .remove(key: arg, version: version)
        case "prefix": return .removePrefix(arg, version: version)
        case "tag": return .removeTag(arg, version: version)
        default: return nil
        }
    }

    /// A position in one epoch's history.
    struct Cursor {
        let epoch: String
        let id: String
        init(epoch: String, id: String) { self.epoch = epoch; self.id = id }
        init?(_ text: String) {
            guard let slash = text.lastIndex(of: "/") else { return nil }
            epoch = String(text[..<slash])
            id = String(text[text.index(after: slash)...])
            guard !epoch.isEmpty, id.split(separator: "-").count == 2 else { return nil }
        }
        var text: String { "\(epoch)/\(id)" }
    }
}
