import Foundation
import Testing
@testable import Cask
import CaskTesting

/// Three nodes on one ``InMemorySharedTier`` against a model (one dictionary: what every node
/// must answer once the cluster has settled), over seeded random sequences of writes, tagged
/// writes, removals by key, prefix and tag, reads on any node, outages during which one node
/// keeps writing (its queue replayed when the tier returns), and the tier restarted empty.
/// A failure prints its seed and the shortest failing sequence found.
@Suite struct SharedTierModelTests {
    enum Op: CustomStringConvertible, Sendable {
        case set(node: Int, key: String, value: String, tag: String?)
        case remove(node: Int, key: String)
        case removePrefix(node: Int, String)
        case removeTag(node: Int, String)
        case read(node: Int, key: String)
        /// Two nodes get-or-load `key` at once (one load across the nodes).
        case load(nodes: [Int], key: String, value: String)
        case outage(writer: Int, ops: [Op])
        case restartEmpty

        var description: String {
            switch self {
            case let .set(n, k, v, t): "node\(n).set(\(k)=\(v)\(t.map { " tag \($0)" } ?? ""))"
            case let .remove(n, k): "node\(n).remove(\(k))"
            case let .removePrefix(n, p): "node\(n).removePrefix(\(p))"
            case let .removeTag(n, t): "node\(n).removeTag(\(t))"
            case let .read(n, k): "node\(n).read(\(k))"
            case let .load(ns, k, v): "nodes\(ns).load(\(k), loader: \(v))"
            case let .outage(w, ops): "outage(writer node\(w): \(ops))"
            case .restartEmpty: "restartEmpty"
            }
        }
    }

    static let keys = ["a:1", "a:2", "b:1", "b:2"], prefixes = ["a:", "b:"], tags = ["t1", "t2"]

    static func randomOps(seed: UInt64, count: Int) -> [Op] {
        var rng = SeededBytes(seed: seed)
        func pick<T>(_ a: [T]) -> T { a[Int(rng.next() % UInt64(a.count))] }
        func change(_ node: Int, _ i: Int) -> Op {
            switch rng.next() % 10 {
            case 0...3: .set(node: node, key: pick(keys), value: "v\(i)", tag: rng.next() % 2 == 0 ? pick(tags) : nil)
            case 4, 5: .remove(node: node, key: pick(keys))
            case 6: .removePrefix(node: node, pick(prefixes))
            case 7: .removeTag(node: node, pick(tags))
            default: .read(node: node, key: pick(keys))
            }
        }
        return (0..<count).map { i in
            switch rng.next() % 20 {
            case 0: .outage(writer: Int(rng.next() % 3), ops: (0..<3).map { j in change(0, i * 10 + j) }.map { $0.on(node: nil) })
            case 1: .restartEmpty
            case 2...4: .read(node: Int(rng.next() % 3), key: pick(keys))
            case 5, 6:
                .load(nodes: { let a = Int(rng.next() % 3); return [a, (a + 1 + Int(rng.next() % 2)) % 3] }(), key: pick(keys), value: "l\(i)")
            default: change(Int(rng.next() % 3), i)
            }
        }
    }

    /// Runs `ops`; the first disagreement, or nil.
    static func run(_ ops: [Op]) async throws -> String? {
        let dir = try TemporaryDirectory()
        let tier = InMemorySharedTier()
        let nodes = try (0..<3).map {
            try SharedTierTests.node(dir, "n\($0)", tier: tier, id: UInt32($0 + 1), retry: .milliseconds(1), loadLease: SharedLoadTests.lease)
        }
        defer { for n in nodes { try? n.close() } }
        var model: [String: (value: String, tag: String?)] = [:]
        guard await SharedTierTests.settle(nodes, tier) else { return "the cluster did not settle at start" }
        for (i, op) in ops.enumerated() {
            switch op {
            case .outage(let writer, let changes):
                tier.isDown = true
                for c in changes { try await apply(c.on(node: writer), nodes, &model) }
                tier.isDown = false
            case .restartEmpty:
                tier.restartEmpty()
                model = [:]
            case .read(let n, let key):
                guard await SharedTierTests.settle(nodes, tier) else { return "step \(i): the cluster did not settle" }
                let got = try await nodes[n].value(String.self, forKey: key)
                if got != model[key]?.value {
                    let inTier = try await tier.entry(forKey: key).map { String(decoding: $0.value, as: UTF8.self) + " \($0.version)" } ?? "nil"
                    let local = nodes.map { "\($0.contains(key))" }.joined(separator: "/")
                    return "step \(i) \(op): got \(got ?? "nil"), model \(model[key]?.value ?? "nil"); tier \(inTier); "
                        + "held locally \(local); stats \(nodes[n].sharedTierStatistics.map { "\($0)" } ?? "-")"
                }
            case let .load(ns, key, value):
                guard await SharedTierTests.settle(nodes, tier) else { return "step \(i): the cluster did not settle" }
                let expected = model[key]?.value ?? value
                let runs = Counter()
                let got = try await withThrowingTaskGroup(of: String.self) { group in
                    for n in ns {
                        group.addTask {
                            try await nodes[n].value(forKey: key, as: String.self, options: CacheEntryOptions(timeToLive: .seconds(600))) {
                                runs.increment()
                                return value
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                if got != [expected, expected] || runs.value != (model[key] == nil ? 1 : 0) {
                    return "step \(i) \(op): got \(got), model \(expected), the loader ran \(runs.value) times"
                }
                if model[key] == nil { model[key] = (value, nil) }
            default:
                try await apply(op, nodes, &model)
            }
            guard await SharedTierTests.settle(nodes, tier) else { return "step \(i): the cluster did not settle" }
        }
        return nil
    }

    static func apply(_ op: Op, _ nodes: [CaskCache], _ model: inout [String: (value: String, tag: String?)]) async throws {
        switch op {
        case let .set(n, key, value, tag):
            if let tag {
                _ = try await nodes[n].removeValue(forKey: key)   // so the loader runs: a tagged write
                _ = try await nodes[n].value(forKey: key, as: String.self, options: CacheEntryOptions(timeToLive: .seconds(600), tags: [tag])) { value }
                model[key] = (value, tag)
            } else {
                try await nodes[n].setValue(value, forKey: key)
                model[key] = (value, nil)
            }
        case let .remove(n, key):
            try await nodes[n].removeValue(forKey: key)
            model[key] = nil
        case let .removePrefix(n, p):
            try await nodes[n].removeValues(withPrefix: p)
            model = model.filter { !$0.key.hasPrefix(p) }
        case let .removeTag(n, t):
            try await nodes[n].removeValues(taggedWith: t)
            model = model.filter { $0.value.tag != t }
        case .read, .load, .outage, .restartEmpty:
            break
        }
    }

    @Test(arguments: 0..<4)
    func clusterAgreesWithTheModel(chunk: Int) async throws {
        let sequences = Int(ProcessInfo.processInfo.environment["CASK_SHARED_MODEL_SEQUENCES"] ?? "") ?? 300
        var steps = 0
        for s in 0..<sequences {
            let seed = UInt64(chunk * 1_000_000 + s)
            let ops = Self.randomOps(seed: seed, count: 24)
            steps += ops.count
            guard let failure = try await Self.run(ops) else { continue }
            var shortest = ops, reason = failure
            var shrunk = true
            while shrunk {
                shrunk = false
                for i in shortest.indices {
                    var fewer = shortest
                    fewer.remove(at: i)
                    if let r = try await Self.run(fewer) { shortest = fewer; reason = r; shrunk = true; break }
                }
            }
            Issue.record("seed \(seed): \(reason)\nshortest failing sequence (\(shortest.count) steps): \(shortest)")
            return
        }
        print("SharedTierModelTests chunk \(chunk): \(sequences) sequences, \(steps) steps, 0 disagreements")
    }
}

extension SharedTierModelTests.Op {
    /// The same change made on `node` (nil: a placeholder filled in later).
    func on(node: Int?) -> Self {
        let n = node ?? 0
        switch self {
        case let .set(_, k, v, t): return .set(node: n, key: k, value: v, tag: t)
        case let .remove(_, k): return .remove(node: n, key: k)
        case let .removePrefix(_, p): return .removePrefix(node: n, p)
        case let .removeTag(_, t): return .removeTag(node: n, t)
        case let .read(_, k): return .read(node: n, key: k)
        default: return self
        }
    }
}
