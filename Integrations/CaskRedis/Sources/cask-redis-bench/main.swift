// The shared tier's benchmark, against a running redis-server on 127.0.0.1:PORT:
// a node's get from memory, from its local disk and through Redis, beside a plain Redis GET
// from the same client; the delay from one node's write returning to another node dropping
// its copy; and three nodes' throughput. Every operation is timed.
//
// usage: cask-redis-bench PORT [OPERATIONS] [DIRECTORY]
import Cask
@_spi(Benchmarks) import CaskRedis
import Foundation

let args = CommandLine.arguments
guard args.count >= 2, let port = Int(args[1]) else {
    FileHandle.standardError.write(Data("usage: cask-redis-bench PORT [OPERATIONS] [DIRECTORY]\n".utf8))
    exit(2)
}
let operations = args.count > 2 ? Int(args[2]) ?? 20_000 : 20_000
let root = args.count > 3 ? args[3] : NSTemporaryDirectory() + "cask-redis-bench-\(getpid())"
try? FileManager.default.removeItem(atPath: root)
let configuration = {
    var c = RedisConfiguration(host: "127.0.0.1", port: port)
    c.keyPrefix = "bench\(getpid()):"
    return c
}()

/// Nanoseconds of each call of `body`, in order. The phases run in detached tasks: from the
/// main actor (top-level code) each call would add two executor hops (about 40 µs here).
func timed(_ n: Int, _ body: (Int) async throws -> Void) async rethrows -> [Double] {
    var out: [Double] = []
    out.reserveCapacity(n)
    for i in 0..<n {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body(i)
        out.append(Double(DispatchTime.now().uptimeNanoseconds - start))
    }
    return out
}

/// Prints a line at once (stdout may be a pipe).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func report(_ name: String, _ ns: [Double]) {
    let s = ns.sorted()
    func q(_ p: Double) -> Double { s[min(s.count - 1, Int(Double(s.count) * p))] / 1000 }
    let mean = s.reduce(0, +) / Double(s.count) / 1000
    say(String(format: "%-38@ n=%6d  mean %8.1f µs  p50 %8.1f  p99 %8.1f  p99.9 %8.1f  max %8.1f  >1ms %d",
                 name as NSString, s.count, mean, q(0.5), q(0.99), q(0.999), s.last! / 1000, s.filter { $0 > 1_000_000 }.count))
}

func node(_ name: String, id: UInt32, memoryItems: Int = 10_000) throws -> (CaskCache, RedisSharedTier) {
    let tier = RedisSharedTier(configuration)
    var o = CacheOptions()
    o.sharedTier = tier
    o.sharedTierNode = id
    o.memory.countLimit = memoryItems
    return (try CaskCache(directory: root + "/" + name, options: o), tier)
}

func waitFollowing(_ c: CaskCache) async {
    while c.sharedTierStatistics?.isFollowing != true { try? await Task.sleep(for: .milliseconds(5)) }
}

let n = operations
let value = String(repeating: "x", count: 100)
let (a, ta) = try node("a", id: 1)
let (b, tb) = try node("b", id: 2, memoryItems: 1)
await waitFollowing(a); await waitFollowing(b)
say("cask-redis-bench: \(n) operations each, 100-byte values, redis-server on 127.0.0.1:\(port)")
for i in 0..<n { try await a.setValue(value, forKey: "k\(i)") }
while (a.sharedTierStatistics?.changesWaiting ?? 0) > 0 { try await Task.sleep(for: .milliseconds(10)) }

// The last 1,000 keys a wrote are in its memory layer (10,000 items).
let hitsBefore = a.statistics.memoryHits
report("get, memory hit (node a)", try await Task.detached { try await timed(n) { i in _ = try await a.value(String.self, forKey: "k\(n - 1 - i % 1000)") } }.value)
say("  memory hits counted: \(a.statistics.memoryHits - hitsBefore) of \(n); memory items \(a.statistics.memoryItems)")
report("get through Redis, cold (node b)", try await Task.detached { try await timed(n) { i in _ = try await b.value(String.self, forKey: "k\(i)") } }.value)
report("get, local disk (node b, memory 1 item)", try await Task.detached { try await timed(n) { i in _ = try await b.value(String.self, forKey: "k\(i)") } }.value)
let client = RedisSharedTier(configuration)
report("plain Redis GET, same client", try await Task.detached { try await timed(n) { i in _ = try await client.plainGET("\(configuration.keyPrefix)plain\(i % 100)") } }.value)
report("set (local write + outbox) (node a)", try await Task.detached { try await timed(n) { i in try await a.setValue(value, forKey: "s\(i)") } }.value)

// The invalidation delay: a's write returns, then b drops its copy. (In a function: top-level
// code would pick the synchronous `value`, which never reads through the shared tier.)
func invalidationDelays(_ count: Int) async throws -> [Double] {
    var delays: [Double] = []
    for i in 0..<count {
        let key = "inv\(i)"
        try await a.setValue("1", forKey: key)
        while (try await b.value(String.self, forKey: key)) != "1" { try await Task.sleep(for: .microseconds(100)) }
        let before = b.sharedTierStatistics?.noticesApplied ?? 0
        let start = DispatchTime.now().uptimeNanoseconds
        try await a.setValue("2", forKey: key)
        while b.contains(key) || (b.sharedTierStatistics?.noticesApplied ?? 0) == before {
            try await Task.sleep(for: .microseconds(50))
        }
        delays.append(Double(DispatchTime.now().uptimeNanoseconds - start))
    }
    return delays
}
let delays = try await Task.detached { try await invalidationDelays(min(n, 2_000)) }.value
report("invalidation: a's write returned -> b's copy gone", delays)

// Three nodes, each with its own task: 80% gets, 20% sets over 10,000 keys, for 5 s.
let nodes = try (0..<3).map { try node("t\($0)", id: UInt32(10 + $0)) }
for (c, _) in nodes { await waitFollowing(c) }
let deadline = ContinuousClock.now + .seconds(5)
let counts = try await withThrowingTaskGroup(of: Int.self) { group in
    for (c, _) in nodes {
        group.addTask {
            var done = 0
            var rng = SystemRandomNumberGenerator()
            while ContinuousClock.now < deadline {
                let k = "m\(Int.random(in: 0..<10_000, using: &rng))"
                if Int.random(in: 0..<5, using: &rng) == 0 { try await c.setValue(value, forKey: k) } else { _ = try await c.value(String.self, forKey: k) }
                done += 1
            }
            return done
        }
    }
    var all: [Int] = []
    for try await count in group { all.append(count) }
    return all
}
say(String(format: "three nodes, 80%% get / 20%% set, 5 s: %.0f ops/s in all (operations per node: %@)", Double(counts.reduce(0, +)) / 5, counts.map(String.init).joined(separator: ", ")))

try await a.close(); try await b.close()
for (c, _) in nodes { try await c.close() }
for t in [ta, tb] + nodes.map(\.1) { t.close() }
client.close()
try? FileManager.default.removeItem(atPath: root)
