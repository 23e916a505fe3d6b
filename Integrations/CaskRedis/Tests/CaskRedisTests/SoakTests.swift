import CaskIntegrationTesting
import Foundation
import Testing

/// A seeded soak: three node processes on one real Redis, thousands of random writes, removals
/// (by key and prefix) and reads, with chaos events (Redis killed and restarted empty with
/// writes queued meanwhile, every connection killed, Redis paused, a node killed -9 and
/// restarted). Checked against a model: outside the chaos windows no node answers a value older
/// than the latest change of that key that finished more than `bound` before the read, and at
/// the end every node answers every key's latest value.
@Suite struct SoakTests {
    /// A change of one key: its value (nil: removed) and when it finished.
    struct Change { let value: String?; let finished: ContinuousClock.Instant }

    static let bound = Duration.milliseconds(300)
    static let keys = (0..<20).map { "k\($0)" }

    @Test func threeNodesUnderChaosAgreeWithTheModel() async throws {
        let steps = Int(ProcessInfo.processInfo.environment["CASK_SOAK_STEPS"] ?? "") ?? 3_000
        let seed = UInt64(ProcessInfo.processInfo.environment["CASK_SOAK_SEED"] ?? "") ?? 44
        var rng = SeededGenerator(state: seed)
        let server = try RedisServer(), folder = try Folder()
        let nodes = try (0..<3).map { try NodeProcess(directory: folder.file("n\($0)"), port: server.port, id: UInt32($0 + 1)) }
        for n in nodes { #expect(await n.settled()) }
        var history: [String: [Change]] = [:]
        var uncheckedUntil = ContinuousClock.now
        var checked = 0, chaosEvents = 0
        func record(_ key: String, _ value: String?) { history[key, default: []].append(Change(value: value, finished: .now)) }

        for step in 0..<steps {
            if step > 0, step % 300 == 0 {
                chaosEvents += 1
                try await chaos(Int.random(in: 0..<4, using: &rng), step: step, server: server, nodes: nodes, rng: &rng, record: record)
                for n in nodes { #expect(await n.settled(within: 30), "step \(step): a node did not recover") }
                uncheckedUntil = .now + Self.bound
                continue
            }
            let node = nodes[Int.random(in: 0..<3, using: &rng)]
            let key = Self.keys[Int.random(in: 0..<Self.keys.count, using: &rng)]
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<45:
                #expect(await node.send("set \(key) s\(step)") == "ok")
                record(key, "s\(step)")
            case 45..<55:
                #expect(await node.send("del \(key)") == "ok")
                record(key, nil)
            case 55..<57:
                #expect(await node.send("prefix k1") == "ok")
                for k in Self.keys where k.hasPrefix("k1") { record(k, nil) }
            default:
                let started = ContinuousClock.now
                let answer = await node.send("get \(key)")
                guard started > uncheckedUntil else { continue }
                checked += 1
                let got: String? = answer == "nil" ? nil : answer.hasPrefix("value ") ? String(answer.dropFirst(6)) : "?\(answer)"
                let allowed = Self.allowed(history[key] ?? [], readAt: started)
                #expect(got == nil || allowed.contains(got), "seed \(seed) step \(step): node\(node.id) read \(key) = \(got ?? "nil"); allowed \(allowed.map { $0 ?? "nil" })")
            }
        }
        // The end: every node answers every key's latest value.
        for n in nodes { #expect(await n.settled(within: 30)) }
        try await Task.sleep(for: Self.bound)
        for key in Self.keys {
            let latest = history[key]?.last?.value ?? nil
            for n in nodes {
                let answer = await n.send("get \(key)")
                #expect(answer == (latest.map { "value \($0)" } ?? "nil"), "seed \(seed): node\(n.id) \(key) = \(answer) at the end, latest \(latest ?? "nil")")
            }
        }
        print("SoakTests: seed \(seed), \(steps) steps, \(checked) reads checked, \(chaosEvents) chaos events")
    }

    /// The values a read that started at `readAt` may answer: the latest change finished more
    /// than `bound` before it, and every change after that one.
    static func allowed(_ changes: [Change], readAt: ContinuousClock.Instant) -> [String?] {
        let settledBefore = readAt - bound
        let lastSettled = changes.lastIndex { $0.finished <= settledBefore }
        let from = lastSettled ?? 0
        return changes.isEmpty ? [nil] : Array(changes[from...].map(\.value)) + (lastSettled == nil ? [nil] : [])
    }

    /// One chaos event, with the writes it lets the nodes make meanwhile.
    func chaos(_ kind: Int, step: Int, server: RedisServer, nodes: [NodeProcess], rng: inout SeededGenerator,
               record: (String, String?) -> Void) async throws {
        switch kind {
        case 0:   // Redis killed, writes queued, Redis back empty: what it held is gone, the queue is not
            for n in nodes { _ = await n.settled() }
            server.kill()
            for k in Self.keys { record(k, nil) }
            for i in 0..<5 {
                let key = Self.keys[Int.random(in: 0..<Self.keys.count, using: &rng)]
                #expect(await nodes[i % 3].send("set \(key) q\(step)-\(i)") == "ok")
                record(key, "q\(step)-\(i)")
            }
            try server.start()
        case 1:   // every connection killed, the followers' included
            try server.cli("CLIENT", "KILL", "TYPE", "normal")
        case 2:   // Redis paused while nodes write
            try server.cli("CLIENT", "PAUSE", "500", "ALL")
            let key = Self.keys[Int.random(in: 0..<Self.keys.count, using: &rng)]
            #expect(await nodes[0].send("set \(key) p\(step)") == "ok")
            record(key, "p\(step)")
        default:  // a node killed -9 and restarted
            let n = nodes[Int.random(in: 0..<3, using: &rng)]
            n.kill()
            try n.start()
        }
    }
}
