import Foundation
import Testing
@testable import Cask

// The loader API against a small reference model (docs: LoadingValues.md). Each seeded random
// sequence of loads (that succeed, fail, or hang past the timeouts), plain reads and writes,
// removals, clock moves through fresh, eager, stale and expired, and reopens runs against a
// real CaskCache with a manual clock and against `LoadingModel`; every answer, and whether the
// loader ran, is compared after every step. A failure prints the seed, the configuration and the
// shortest failing sequence found by shrinking.

/// One step of a loading sequence.
enum LoadStep: Equatable, CustomStringConvertible {
    enum Outcome: Equatable { case value(Int), fail, hang }
    case advance(Int64)
    case load(String, Outcome)
    case get(String)
    case set(String, Int)
    case remove(String)
    case reopen

    var description: String {
        switch self {
        case .advance(let ms): return "advance(\(ms) ms)"
        case .load(let k, let o): return "load(\(k), \(o))"
        case .get(let k): return "get(\(k))"
        case .set(let k, let v): return "set(\(k), \(v))"
        case .remove(let k): return "remove(\(k))"
        case .reopen: return "reopen"
        }
    }
}

/// What a step answered: a value and whether it was stale, an error's kind, and whether the
/// step's loader ran.
struct LoadAnswer: Equatable {
    var value: Int?
    var isStale = false
    var error: String?
    var loaderRan = false
}

/// The entry options a sequence runs with (clock times in ms, timeouts real).
struct LoadingConfig: CustomStringConvertible {
    var staleWindow: Int64
    var eager: Double?
    var softTimeout: Bool
    /// Whether loads may hang, and the timeouts are set (soft 200 ms when `softTimeout`, hard
    /// 400 ms). Without hangs no timeout is set: nothing then depends on how fast tasks run.
    var hangs: Bool
    let ttl: Int64 = 100, throttle: Int64 = 50

    var options: CacheEntryOptions {
        CacheEntryOptions(timeToLive: .milliseconds(ttl), staleWindow: .milliseconds(staleWindow), eagerRefresh: eager,
                          softTimeout: hangs && softTimeout ? .milliseconds(200) : nil, hardTimeout: hangs ? .milliseconds(400) : nil,
                          failSafeThrottle: .milliseconds(throttle))
    }
    var description: String { "ttl 100 ms, stale window \(staleWindow) ms, eager \(eager.map { "\($0)" } ?? "off"), soft timeout \(hangs && softTimeout ? "200 ms" : "none"), hard \(hangs ? "400 ms" : "none"), throttle 50 ms" }
}

/// The obviously correct version of the rules.
struct LoadingModel {
    struct Item { var value: Int; var freshUntil: Int64; var end: Int64 }   // 0 = never
    var items: [String: Item] = [:]
    var throttles: [String: Int64] = [:]
    var hung: Set<String> = []
    var now: Int64 = 0
    let config: LoadingConfig

    init(config: LoadingConfig, now: Int64) { self.config = config; self.now = now }

    mutating func live(_ key: String) -> Item? {
        if let i = items[key], i.end != 0 && now >= i.end { items[key] = nil }
        return items[key]
    }

    mutating func apply(_ step: LoadStep) -> LoadAnswer {
        switch step {
        case .advance(let ms): now += ms; return LoadAnswer()
        case .get(let k):
            guard let i = live(k), i.freshUntil == 0 || now < i.freshUntil else { return LoadAnswer() }
            return LoadAnswer(value: i.value)
        case .set(let k, let v): items[k] = Item(value: v, freshUntil: 0, end: 0); return LoadAnswer()
        case .remove(let k): items[k] = nil; return LoadAnswer()
        case .reopen: throttles = [:]; hung = []; return LoadAnswer()
        case .load(let k, let outcome): return load(k, outcome)
        }
    }

    private func throttled(_ k: String) -> Bool { throttles[k].map { now < $0 } ?? false }

    private mutating func store(_ k: String, _ v: Int) {
        let fresh = now + config.ttl
        items[k] = Item(value: v, freshUntil: fresh, end: fresh + config.staleWindow)
        throttles[k] = nil
    }

    private mutating func load(_ k: String, _ outcome: LoadStep.Outcome) -> LoadAnswer {
        if let i = live(k), i.freshUntil == 0 || now < i.freshUntil {
            var answer = LoadAnswer(value: i.value)
            let lead = Int64((Double(config.ttl) * (1 - (config.eager ?? 1))).rounded(.up))
            if config.eager != nil, i.freshUntil != 0, now >= i.freshUntil - lead, !throttled(k), !hung.contains(k) {
                answer.loaderRan = true   // one background refresh
                switch outcome {
                case .value(let v): store(k, v)
                case .fail: break
                case .hang: hung.insert(k)
                }
            }
            return answer
        }
        if let stale = live(k) {
            let served = LoadAnswer(value: stale.value, isStale: true)
            if throttled(k) || hung.contains(k) { return served }
            switch outcome {
            case .value(let v): store(k, v); return LoadAnswer(value: v, loaderRan: true)
            case .fail:
                throttles[k] = now + config.throttle
                return LoadAnswer(value: stale.value, isStale: true, error: "fail-safe", loaderRan: true)
            case .hang: hung.insert(k); return LoadAnswer(value: stale.value, isStale: true, loaderRan: true)
            }
        }
        if hung.contains(k) { return LoadAnswer(error: "timedOut") }
        switch outcome {
        case .value(let v): store(k, v); return LoadAnswer(value: v, loaderRan: true)
        case .fail: return LoadAnswer(error: "loaderFailed", loaderRan: true)
        case .hang: return LoadAnswer(error: "timedOut", loaderRan: true)   // abandoned: cancelled
        }
    }
}

@Suite struct LoadingModelTests {
    struct Hang: Error {}
    struct Failure: Error {}

    /// Loaders that hang poll this until the sequence ends (or their task is cancelled).
    final class Release: Sendable {
        let done = Counter()
    }

    /// Runs `steps` on a fresh cache; returns the first disagreement, or nil.
    func run(_ steps: [LoadStep], _ config: LoadingConfig) async throws -> String? {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        var o = CacheOptions()
        o.disk = options(clock: clock.wallClock)
        var cache = try CaskCache(directory: dir.path, options: o)
        var model = LoadingModel(config: config, now: clock.milliseconds)
        let release = Release()
        defer { release.done.increment() }
        for (n, step) in steps.enumerated() {
            let expected = model.apply(step)
            let ran = Counter()
            var actual = try await apply(step, to: &cache, clock: clock, config: config, options: o, directory: dir, release: release, ran: ran)
            // Background refreshes end (or hang) before the next step; then the loader has run if it was to.
            guard await eventually(within: 5, { cache.runningLoadCount == model.hung.count }) else {
                return "step \(n) \(step): \(cache.runningLoadCount) loads running, \(model.hung.count) hung"
            }
            // A hung background load is running before its loader is scheduled: give it a moment.
            if expected.loaderRan { _ = await eventually(within: 2) { ran.value > 0 } }
            actual.loaderRan = ran.value > 0
            if actual != expected { return "step \(n) \(step): expected \(expected), got \(actual)" }
        }
        try await cache.close()
        return nil
    }

    func apply(_ step: LoadStep, to cache: inout CaskCache, clock: ManualClock, config: LoadingConfig, options: CacheOptions,
               directory: TemporaryDirectory, release: Release, ran: Counter) async throws -> LoadAnswer {
        switch step {
        case .advance(let ms): clock.advance(.milliseconds(ms)); return LoadAnswer()
        case .get(let k): return LoadAnswer(value: try await cache.value(Int.self, forKey: k))
        case .set(let k, let v): try await cache.setValue(v, forKey: k); return LoadAnswer()
        case .remove(let k): try await cache.removeValue(forKey: k); return LoadAnswer()
        case .reopen:
            try await cache.close()
            cache = try CaskCache(directory: directory.path, options: options)
            return LoadAnswer()
        case .load(let k, let outcome):
            var answer = LoadAnswer()
            do {
                let got = try await cache.loadedValue(forKey: k, as: Int.self, options: config.options) {
                    ran.increment()
                    switch outcome {
                    case .value(let v): return v
                    case .fail: throw Failure()
                    case .hang:
                        while release.done.value == 0 { try await Task.sleep(for: .milliseconds(2)) }
                        throw Hang()
                    }
                }
                answer = LoadAnswer(value: got.value, isStale: got.isStale, error: got.loaderError == nil ? nil : "fail-safe")
            } catch {
                switch error {
                case .loaderFailed: answer.error = "loaderFailed"
                case .timedOut: answer.error = "timedOut"
                default: answer.error = "\(error)"
                }
            }
            return answer
        }
    }

    static func steps(seed: UInt64, count: Int, hangs: Bool) -> [LoadStep] {
        var r = SeededBytes(seed: seed)
        let keys = ["a", "b"]
        return (0..<count).map { _ in
            let k = keys[Int(r.next() % 2)]
            switch r.next() % 100 {
            case 0..<25: return .advance([10, 30, 60, 90, 150, 400][Int(r.next() % 6)])
            case 25..<65:
                let o = r.next() % 100
                return .load(k, hangs && o < 4 ? .hang : o < 25 ? .fail : .value(Int(r.next() % 1000)))
            case 65..<80: return .get(k)
            case 80..<88: return .set(k, Int(r.next() % 1000))
            case 88..<97: return .remove(k)
            default: return .reopen
            }
        }
    }

    /// Shortest failing subsequence found by dropping one step at a time.
    func shrink(_ steps: [LoadStep], _ config: LoadingConfig) async throws -> [LoadStep] {
        var current = steps
        var progress = true
        while progress {
            progress = false
            for i in current.indices.reversed() {
                var shorter = current
                shorter.remove(at: i)
                if try await run(shorter, config) != nil { current = shorter; progress = true }
            }
        }
        return current
    }

    @Test(arguments: 0..<4)
    func theLoaderAPIAgreesWithTheModel(chunk: Int) async throws {
        let sequences = 500, length = 30
        var steps = 0, loads = 0, hangs = 0
        for n in 0..<sequences {
            let seed = UInt64(chunk * sequences + n) &* 0x9E37_79B9 &+ 27
            var r = SeededBytes(seed: seed)
            let config = LoadingConfig(staleWindow: r.next() % 4 == 0 ? 0 : 300, eager: r.next() % 2 == 0 ? 0.5 : nil,
                                       softTimeout: r.next() % 2 == 0, hangs: r.next() % 4 == 0)
            let sequence = Self.steps(seed: seed, count: length, hangs: config.hangs)
            steps += sequence.count
            loads += sequence.filter { if case .load = $0 { true } else { false } }.count
            hangs += sequence.filter { $0 == .load("a", .hang) || $0 == .load("b", .hang) }.count
            if let problem = try await run(sequence, config) {
                let shortest = try await shrink(sequence, config)
                Issue.record("""
                    the loader API disagrees with the model (seed \(seed), \(config)): \(problem)
                    shortest failing sequence (\(shortest.count) steps): \(shortest.map(\.description).joined(separator: ", "))
                    """)
                return
            }
        }
        print("loading model, chunk \(chunk): \(sequences) sequences, \(steps) steps, \(loads) loads (\(hangs) hanging), 0 disagreements")
    }
}
