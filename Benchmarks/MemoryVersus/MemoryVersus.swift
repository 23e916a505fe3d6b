// `memory-versus`: MemoryCache and the CaskCache facade's memory hit against the fastest simple
// implementations of the same work, measured in one run (medians of --runs runs, ops/s).
//
//   swift run -c release --package-path Benchmarks memory-versus [--runs 5]
import Cask
import Dispatch
import Foundation
import Synchronization

/// The baseline: one `Mutex`, a `Dictionary` from key to slot, and an LRU list linked by slot
/// indices. Exact global LRU with a count limit; the simplest fast design.
final class LockedDictionaryLRU<Value: Sendable>: Sendable {
    struct Node { var key: String; var value: Value; var previous: Int32; var next: Int32 }
    struct State {
        var slots: [String: Int32] = [:]
        var nodes: [Node] = []
        var head: Int32 = -1, tail: Int32 = -1
        mutating func unlink(_ i: Int32) {
            let n = nodes[Int(i)]
            if n.previous >= 0 { nodes[Int(n.previous)].next = n.next } else { head = n.next }
            if n.next >= 0 { nodes[Int(n.next)].previous = n.previous } else { tail = n.previous }
        }
        mutating func pushFront(_ i: Int32) {
            nodes[Int(i)].previous = -1
            nodes[Int(i)].next = head
            if head >= 0 { nodes[Int(head)].previous = i }
            head = i
            if tail < 0 { tail = i }
        }
    }
    let state = Mutex(State())
    let limit: Int
    init(limit: Int) { self.limit = limit }

    func value(forKey key: String) -> Value? {
        state.withLock { s in
            guard let i = s.slots[key] else { return nil }
            if s.head != i { s.unlink(i); s.pushFront(i) }
            return s.nodes[Int(i)].value
        }
    }

    func setValue(_ value: Value, forKey key: String) {
        state.withLock { s in
            if let i = s.slots[key] {
                s.nodes[Int(i)].value = value
                if s.head != i { s.unlink(i); s.pushFront(i) }
                return
            }
            if s.slots.count >= limit, s.tail >= 0 {
                let victim = s.tail
                s.unlink(victim)
                s.slots[s.nodes[Int(victim)].key] = nil
                s.nodes[Int(victim)] = Node(key: key, value: value, previous: -1, next: -1)
                s.slots[key] = victim
                s.pushFront(victim)
                return
            }
            let i = Int32(s.nodes.count)
            s.nodes.append(Node(key: key, value: value, previous: -1, next: -1))
            s.slots[key] = i
            s.pushFront(i)
        }
    }
}

func keys(_ n: Int) -> [String] { (0..<n).map { String(format: "key-%012d", $0) } }

/// Operations per second of `body` called `operations` times in total over `threads` threads.
func rate(threads: Int = 1, operations: Int, _ body: @escaping @Sendable (_ thread: Int, _ i: Int) -> Void) -> Double {
    let perThread = operations / threads
    let start = DispatchTime.now().uptimeNanoseconds
    DispatchQueue.concurrentPerform(iterations: threads) { t in
        for i in 0..<perThread { body(t, i) }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return Double(perThread * threads) / seconds
}

func median(_ xs: [Double]) -> Double { let s = xs.sorted(); return s[s.count / 2] }

var runs = 5
if let i = CommandLine.arguments.firstIndex(of: "--runs"), i + 1 < CommandLine.arguments.count,
   let n = Int(CommandLine.arguments[i + 1]), n > 0 { runs = n }
/// `--only TEXT`: run only the workloads whose name contains TEXT (for profiling one of them).
var only: String?
if let i = CommandLine.arguments.firstIndex(of: "--only"), i + 1 < CommandLine.arguments.count { only = CommandLine.arguments[i + 1] }

let hot = keys(1_000)
/// Each thread's own copies of the hot keys: 16-byte keys are heap strings, and copying one out of
/// a shared array retains it, so two threads reading the same `String` objects would bounce
/// their reference counts between the cores (a cost of the harness, not of the cache).
let hotByThread = (0..<2).map { _ in hot.map { String(decoding: Array($0.utf8), as: UTF8.self) } }
/// The keys one thread looks up: copies too, as an app's keys would be, so that no lookup finds
/// its key by the identity of the stored `String` (a shortcut the 2-thread runs cannot take).
let lookupKeys = hotByThread[0]
let wide = keys(100_000)
var generator = SystemRandomNumberGenerator()
let hotOrder = (0..<4096).map { _ in Int.random(in: 0..<hot.count, using: &generator) }
let wideOrder = (0..<(1 << 20)).map { _ in Int.random(in: 0..<wide.count, using: &generator) }
let hotOps = 4_000_000, wideOps = 2_000_000

var dictionary: [String: Int] = [:]
for (n, k) in hot.enumerated() { dictionary[k] = n }
let frozen = dictionary
let lruHot = LockedDictionaryLRU<Int>(limit: 200_000)
let lruWide = LockedDictionaryLRU<Int>(limit: 200_000)
let cacheHot = MemoryCache<Int>(limits: .init(countLimit: 200_000))
let cacheWide = MemoryCache<Int>(limits: .init(countLimit: 200_000))
/// The frequency-aware policy: every read also counts its key in the sketch, behind one lock.
let cacheCounting = MemoryCache<Int>(limits: .init(countLimit: 200_000, policy: .frequencyAware))
/// The clock every cache used before `WallClock.system` became the coarse one: a closure
/// reading `CLOCK_REALTIME` (the "before" line, measured in the same run).
let preciseClosureClock = WallClock { WallClock.precise.milliseconds() }
let cachePrecise = MemoryCache<Int>(limits: .init(countLimit: 200_000), clock: preciseClosureClock)
for (n, k) in hot.enumerated() { lruHot.setValue(n, forKey: k); cacheHot.setValue(n, forKey: k); cachePrecise.setValue(n, forKey: k); cacheCounting.setValue(n, forKey: k) }
for (n, k) in wide.enumerated() { lruWide.setValue(n, forKey: k); cacheWide.setValue(n, forKey: k) }
let directory = NSTemporaryDirectory() + "memory-versus-\(getpid())"
var cacheOptions = CacheOptions()
cacheOptions.disk.compaction.isAutomatic = false
let facade = try CaskCache(directory: directory, options: cacheOptions)
for (n, k) in hot.enumerated() { try facade.setValue(n, forKey: k) }
let sink = Atomic<Int>(0)

let workloads: [(String, () -> Double)] = [
    ("get hot: bare Dictionary", { rate(operations: hotOps) { _, i in if frozen[lookupKeys[hotOrder[i & 4095]]] == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: bare Dictionary, 2 threads", { rate(threads: 2, operations: hotOps) { t, i in if frozen[hotByThread[t][hotOrder[(i + t * 2048) & 4095]]] == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: locked Dictionary LRU", { rate(operations: hotOps) { _, i in if lruHot.value(forKey: lookupKeys[hotOrder[i & 4095]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: MemoryCache", { rate(operations: hotOps) { _, i in if cacheHot.value(forKey: lookupKeys[hotOrder[i & 4095]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: MemoryCache, precise clock through a closure (before)", { rate(operations: hotOps) { _, i in if cachePrecise.value(forKey: lookupKeys[hotOrder[i & 4095]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: MemoryCache, 2 threads", { rate(threads: 2, operations: hotOps) { t, i in if cacheHot.value(forKey: hotByThread[t][hotOrder[(i + t * 2048) & 4095]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: MemoryCache, frequency-aware", { rate(operations: hotOps) { _, i in if cacheCounting.value(forKey: lookupKeys[hotOrder[i & 4095]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: MemoryCache, frequency-aware, 2 threads", { rate(threads: 2, operations: hotOps) { t, i in if cacheCounting.value(forKey: hotByThread[t][hotOrder[(i + t * 2048) & 4095]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get hot: CaskCache facade memory hit", { rate(operations: hotOps) { _, i in if (try? facade.value(Int.self, forKey: lookupKeys[hotOrder[i & 4095]])) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("set hot: locked Dictionary LRU", { rate(operations: hotOps) { _, i in lruHot.setValue(i, forKey: lookupKeys[hotOrder[i & 4095]]) } }),
    ("set hot: MemoryCache", { rate(operations: hotOps) { _, i in cacheHot.setValue(i, forKey: lookupKeys[hotOrder[i & 4095]]) } }),
    ("get 100K random: locked Dictionary LRU", { rate(operations: wideOps) { _, i in if lruWide.value(forKey: wide[wideOrder[i & 0xFFFFF]]) == nil { sink.add(1, ordering: .relaxed) } } }),
    ("get 100K random: MemoryCache", { rate(operations: wideOps) { _, i in if cacheWide.value(forKey: wide[wideOrder[i & 0xFFFFF]]) == nil { sink.add(1, ordering: .relaxed) } } }),
]

var results: [String: [Double]] = [:]
for _ in 0..<runs {
    for (name, run) in workloads where only.map({ name.contains($0) }) ?? true { results[name, default: []].append(run()) }
}
print("workload | median ops/s (\(runs) runs)")
for (name, _) in workloads where results[name] != nil {
    print(String(format: "%@ | %.2f M/s", name, median(results[name]!) / 1e6))
}
/// The median over runs of each run's ratio a / b (both measured in that run, back to back).
@MainActor func ratio(_ a: String, _ b: String) -> String {
    guard let x = results[a], let y = results[b], x.count == y.count else { return "-" }
    let ratios = zip(x, y).map { $0 / $1 }
    return String(format: "%.2f (%.2f-%.2f)", median(ratios), ratios.min()!, ratios.max()!)
}
print("ratios, median of the runs' own ratios (min-max):")
let comparisons: [(String, String, String)] = [
    ("get hot: MemoryCache", "get hot: bare Dictionary", "get hot vs bare Dictionary (aim 0.8)"),
    ("get hot: MemoryCache", "get hot: locked Dictionary LRU", "get hot vs locked LRU"),
    ("get hot: MemoryCache", "get hot: MemoryCache, precise clock through a closure (before)", "get hot vs the precise closure clock"),
    ("set hot: MemoryCache", "set hot: locked Dictionary LRU", "set vs locked LRU (aim 0.5)"),
    ("get 100K random: MemoryCache", "get 100K random: locked Dictionary LRU", "100K get vs locked LRU (aim 1.0)"),
    ("get hot: MemoryCache, 2 threads", "get hot: MemoryCache", "2 threads vs 1 (aim 1.7)"),
    ("get hot: bare Dictionary, 2 threads", "get hot: bare Dictionary", "bare Dictionary, 2 threads vs 1 (the machine's limit)"),
    ("get hot: CaskCache facade memory hit", "get hot: MemoryCache", "facade hit vs MemoryCache (aim 0.83)"),
    ("get hot: MemoryCache, frequency-aware", "get hot: MemoryCache", "frequency-aware get vs LRU get"),
    ("get hot: MemoryCache, frequency-aware, 2 threads", "get hot: MemoryCache, 2 threads", "frequency-aware vs LRU, 2 threads"),
]
for (a, b, label) in comparisons where results[a] != nil && results[b] != nil {
    print("  \(label): \(ratio(a, b))")
}
if sink.load(ordering: .relaxed) != 0 { print("unexpected misses: \(sink.load(ordering: .relaxed))") }
try? facade.close()
try? FileManager.default.removeItem(atPath: directory)
