import Foundation
import Testing
@testable import Cask
import CaskFormat

// Model-based tests of the documented cache semantics (README "Cache limits", "The two-level
// cache"; MemoryCache's doc comment). A small reference model — a dictionary with explicit
// times, pins, TTLs, use order and limits — runs the same seeded random operation sequence as
// `DiskStore`, `MemoryCache` (1 shard and the default 32) and `CaskCache`, on an injected clock, and
// every observable result is compared after every step. A failure prints the seed and the
// shortest failing sequence found by shrinking.

/// One generated operation.
enum ModelOp: CustomStringConvertible {
    case put(key: Int, size: Int, ttl: Int64?, pinned: Bool)
    case get(Int)
    case remove(Int)
    case pin(Int, Bool)
    case trimToCount(Int)
    case trimToSize(Int)
    case trimLargestFirst(Int)
    case trimToDate(Int64)   // milliseconds before now
    case trimToAge(Int64)    // memory only
    case removeExpired
    case removeAllPinned(Bool)
    case removePrefix(String)
    /// A cache entry listing tags `t<n>` (disk and cache targets; through the disk layer).
    case putTagged(key: Int, size: Int, tags: [Int])
    case removeTag(Int)
    case compact
    case removeAll
    case reopen
    /// A reopen without the index snapshot: from hints, tag and prefix removals applied again.
    case reopenFromHints
    case advance(Int64)
    /// A put, get or remove through the cache facade's disk layer directly (cache target only).
    indirect case throughDisk(ModelOp)

    var description: String {
        switch self {
        case let .put(k, size, ttl, pinned): return "put(k\(k), \(size) B\(ttl.map { ", ttl \($0) ms" } ?? "")\(pinned ? ", pinned" : ""))"
        case let .get(k): return "get(k\(k))"
        case let .remove(k): return "remove(k\(k))"
        case let .pin(k, p): return p ? "pin(k\(k))" : "unpin(k\(k))"
        case let .trimToCount(n): return "trim(toCount: \(n))"
        case let .trimToSize(n): return "trim(toSize: \(n))"
        case let .trimLargestFirst(n): return "trimLargestFirst(toSize: \(n))"
        case let .trimToDate(ms): return "trim(toDate: now - \(ms) ms)"
        case let .trimToAge(ms): return "trim(toAge: \(ms) ms)"
        case .removeExpired: return "removeExpired()"
        case let .removeAllPinned(p): return "removeAll(pinned: \(p))"
        case let .removePrefix(p): return "removeValues(withPrefix: \"\(p)\")"
        case let .putTagged(k, size, tags): return "putEntry(k\(k), \(size) B, tags \(tags.map { "t\($0)" }))"
        case let .removeTag(t): return "removeValues(taggedWith: \"t\(t)\")"
        case .reopenFromHints: return "reopen (no snapshot)"
        case .compact: return "compact()"
        case .removeAll: return "removeAll()"
        case .reopen: return "reopen"
        case let .advance(ms): return "advance(\(ms) ms)"
        case let .throughDisk(op): return "disk.\(op)"
        }
    }
}

/// Which API a sequence runs against, and its limits.
struct ModelConfig: CustomStringConvertible {
    enum Target { case disk, memory(shards: Int), cache }
    var target: Target
    var countLimit: Int?
    var byteLimit: Int?
    var ageLimit: Int64?
    var memoryCostLimit: Int?
    /// The ``EvictionPolicy/frequencyAware`` policy (the disk layer's, or the memory cache's):
    /// a write of a new key that would evict may be declined, and then changes nothing;
    /// evictions keep the LRU order.
    var frequencyAware = false
    var description: String {
        "\(target)\(frequencyAware ? " frequencyAware" : "") countLimit \(countLimit.map(String.init) ?? "none") byteLimit \(byteLimit.map(String.init) ?? "none") ageLimit \(ageLimit.map { "\($0) ms" } ?? "none") memoryCostLimit \(memoryCostLimit.map(String.init) ?? "none")"
    }
}

/// Deterministic generator of configurations and sequences.
struct ModelGenerator {
    var random: SeededBytes
    init(seed: UInt64) { random = SeededBytes(seed: seed) }
    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(random.next() % UInt64(range.count)) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    mutating func config(_ target: ModelConfig.Target) -> ModelConfig {
        var c = ModelConfig(target: target)
        if chance(60) { c.countLimit = int(1...8) }
        switch target {
        case .memory:
            if chance(50) { c.memoryCostLimit = int(0...3000) }
            if chance(40) { c.ageLimit = Int64(int(1...3000)) }
            if c.countLimit != nil || c.memoryCostLimit != nil { c.frequencyAware = chance(40) }
        case .disk, .cache:
            if chance(50) {
                c.byteLimit = int(4...6) * 4096 * 4
                c.frequencyAware = chance(40)
            }
            if chance(40) { c.ageLimit = Int64(int(1...3000)) }
        }
        return c
    }

    mutating func sequence(_ config: ModelConfig) -> [ModelOp] {
        let isCache: Bool = { if case .cache = config.target { return true } else { return false } }()
        return plainSequence(config).map { op in
            switch op {
            case .put, .get, .remove: return isCache && chance(25) ? .throughDisk(op) : op
            default: return op
            }
        }
    }

    mutating func plainSequence(_ config: ModelConfig) -> [ModelOp] {
        let isMemory: Bool = { if case .memory = config.target { return true } else { return false } }()
        let budget = CacheModel.itemBudget(byteLimit: config.byteLimit) ?? 16_000
        return (0..<int(1...200)).map { _ in
            let key = int(0...9)
            switch int(0...99) {
            case 0..<30:
                let size = chance(10) ? int(budget - 200...budget + 200) : chance(50) ? int(0...40) : int(0...3000)
                return .put(key: key, size: max(0, size), ttl: chance(25) ? Int64(int(1...3000)) : nil, pinned: !isMemory && chance(15))
            case 30..<55: return .get(key)
            case 55..<62: return .remove(key)
            case 62..<67: return isMemory ? .get(key) : .pin(key, chance(50))
            case 67..<70: return .trimToCount(int(0...6))
            case 70..<73: return isMemory ? .trimToSize(int(0...4000)) : .trimToSize(int(0...12_000))
            case 73..<75: return isMemory ? .trimToAge(Int64(int(0...3000))) : .trimLargestFirst(int(0...12_000))
            case 75..<77: return .trimToDate(Int64(int(0...3000)))
            case 77..<79: return isMemory ? .trimToAge(Int64(int(0...3000))) : .removeExpired
            case 79..<80: return isMemory ? .removeAll : .removeAllPinned(chance(50))
            case 80..<82: return isMemory ? .get(key) : .compact
            case 82..<83: return .removeAll
            case 83..<86: return isMemory ? .get(key) : .reopen
            case 86..<89: return isMemory ? .get(key) : .removePrefix(chance(25) ? "k" : CacheModel.key(key))
            case 89..<93:
                let tags = (0..<3).filter { _ in chance(40) }
                return isMemory ? .get(key) : .putTagged(key: key, size: chance(50) ? int(0...40) : int(0...2000), tags: tags)
            case 93..<95: return isMemory ? .get(key) : .removeTag(int(0...2))
            // Only without limits: a reopen from hints may bring back an item evicted without a
            // tombstone (format-spec.md, "Eviction without a tombstone").
            case 95..<96: return isMemory || config.countLimit != nil || config.byteLimit != nil || config.ageLimit != nil ? .get(key) : .reopenFromHints
            default: return .advance(Int64(chance(20) ? 0 : int(1...1500)))
            }
        }
    }
}

/// The reference model: what every documented rule says the cache holds.
struct CacheModel {
    /// The store's item budget for the model's disk configuration (4 KiB segments).
    static func itemBudget(byteLimit: Int?) -> Int? {
        var o = options(segmentSize: 4096)
        o.limits.byteLimit = byteLimit
        return o.itemByteBudget
    }

    struct Item {
        var value: Data
        var access: Int64
        var expiry: Int64?     // absolute ms
        var pinned: Bool
        var order: UInt64      // write order (disk) or use order (memory)
        var cost: Int          // memory cost, or disk record bytes
        var tags: Set<Int> = []   // a cache entry's tags (disk)
    }
    var items: [Int: Item] = [:]   // held items (the disk store also holds gone items until noticed)
    var now: Int64 = 1_800_000_000_000
    var counter: UInt64 = 0
    let config: ModelConfig

    static func key(_ k: Int) -> String { "k\(k)" }
    static func recordSize(_ k: Int, _ size: Int) -> Int { 40 + key(k).utf8.count + size }
    /// A cache entry's record: its entry header (9 bytes, or with tags 10 plus each tag's
    /// length byte and bytes) is part of the value.
    static func entryRecordSize(_ k: Int, _ size: Int, tags: [Int]) -> Int {
        recordSize(k, size) + 9 + (tags.isEmpty ? 0 : 1 + tags.count * 3)
    }

    /// Expired (TTL) or past the age limit, and not pinned.
    func isGone(_ item: Item) -> Bool {
        if item.pinned { return false }
        if let e = item.expiry, now >= e { return true }
        if let a = config.ageLimit, now - item.access > a { return true }
        return false
    }
    var liveKeys: Set<Int> { Set(items.filter { !isGone($0.value) }.keys) }
    var heldBytes: Int { items.values.reduce(0) { $0 + $1.cost } }

    /// The documented eviction order, lowest first: gone items; unpinned before pinned; least
    /// recently used (to the ms) — or largest first; then oldest write.
    func rank(_ k: Int, largestFirst: Bool = false) -> (Int, Int, Int64, UInt64) {
        let i = items[k]!
        if isGone(i) { return (0, 0, 0, 0) }
        return (1, i.pinned ? 1 : 0, largestFirst ? -Int64(i.cost) : i.access, i.order)
    }
}

/// Runs one sequence against the real API and the model; returns the first disagreement.
final class ModelRun {
    let config: ModelConfig
    var model: CacheModel
    let clock = ManualClock()
    let directory = TemporaryDirectory("model")
    var store: DiskStore?
    var cache: CaskCache?
    /// The cache's operations go to its disk layer directly (``ModelOp/throughDisk(_:)``).
    var throughDisk = false
    /// The cache, unless this step goes to its disk layer directly.
    var facade: CaskCache? { throughDisk ? nil : cache }
    var memory: MemoryCache<Data>?
    let evictions = Locked<[(String, String)]>([])

    init(_ config: ModelConfig) {
        self.config = config
        model = CacheModel(config: config)
    }

    func storeOptions() -> StoreOptions {
        var o = options(segmentSize: 4096, clock: clock.wallClock)
        o.compression = .never
        o.limits = StoreLimits(byteLimit: config.byteLimit, countLimit: config.countLimit, ageLimit: config.ageLimit.map { .milliseconds($0) })
        o.limits.policy = config.frequencyAware ? .frequencyAware : .leastRecentlyUsed
        let evictions = self.evictions
        o.eventHandler = { event in
            if case .evicted(let key, let cause) = event { evictions.withLock { $0.append((key, cause.rawValue)) } }
        }
        return o
    }

    func open() throws {
        switch config.target {
        case .disk: store = try DiskStore(directory: directory.path, options: storeOptions())
        case .cache:
            var o = CacheOptions()
            o.disk = storeOptions()
            o.memory = .init(countLimit: 2, costLimit: 2000)   // small: promotions and memory evictions happen
            cache = try CaskCache(directory: directory.path, options: o)
            store = cache!.disk
        case .memory(let shards):
            let evictions = self.evictions
            memory = MemoryCache<Data>(limits: .init(countLimit: config.countLimit, costLimit: config.memoryCostLimit,
                                                     ageLimit: config.ageLimit.map { .milliseconds($0) },
                                                     policy: config.frequencyAware ? .frequencyAware : .leastRecentlyUsed),
                                       shards: shards, clock: clock.wallClock) { key, _, cause in
                evictions.withLock { $0.append((key, cause.rawValue)) }
            }
        }
    }

    func value(_ k: Int) -> Data { Data((0..<(model.items[k]?.value.count ?? 0)).map { UInt8(truncatingIfNeeded: $0 &+ k) }) }

    /// Runs `ops`; nil when every step agreed, else what disagreed and at which step.
    func run(_ ops: [ModelOp]) -> String? {
        do { try open() } catch { return "open failed: \(error)" }
        defer { try? cache?.close(); try? store?.close() }
        for (n, op) in ops.enumerated() {
            do {
                if let problem = try step(op) { return "step \(n) \(op): \(problem)" }
                if let problem = checkState() { return "after step \(n) \(op): \(problem)" }
            } catch {
                return "step \(n) \(op): unexpected error \(error)"
            }
        }
        return nil
    }

    // MARK: Steps

    func step(_ op: ModelOp) throws -> String? {
        if case .memory = config.target { return try memoryStep(op) }
        return try diskStep(op)
    }

    /// Applies the implementation's reported evictions to the model, checking that each one
    /// follows the documented order (or is of an item already gone), and that none is `spared`.
    func applyEvictions(largestFirst: Bool = false, sparing: Int? = nil) -> String? {
        let reported = evictions.withLock { e -> [(String, String)] in defer { e = [] }; return e }
        for (key, cause) in reported {
            guard let k = Int(key.dropFirst()), model.items[k] != nil else {
                // An item noticed gone on read reports its eviction with the next write.
                if cause == "timeToLive" || cause == "age" { continue }
                return "evicted \(key) (\(cause)), which the model does not hold"
            }
            if cause == "timeToLive" || cause == "age" || cause == "damage" {
                if cause == "damage" || !model.isGone(model.items[k]!) { return "evicted \(key) for \(cause) while live" }
                model.items[k] = nil
                continue
            }
            if k == sparing { return "a put evicted its own key \(key)" }
            let r = model.rank(k, largestFirst: largestFirst)
            if let lower = model.items.keys.filter({ $0 != sparing && $0 != k }).first(where: { model.rank($0, largestFirst: largestFirst) < r }),
               r.0 != 0 {
                return "evicted \(key) (\(cause)) before k\(lower), which ranks lower: \(model.rank(lower, largestFirst: largestFirst)) < \(r)"
            }
            model.items[k] = nil
        }
        return nil
    }

    /// After a trim whose own removals the model applied itself: the tombstones it wrote can
    /// compact past the byte limit's headroom, and compaction's sweep drops expired items; the
    /// model drops those too. The trim's own events are dropped.
    func applyExpiries() {
        let reported = evictions.withLock { e -> [(String, String)] in defer { e = [] }; return e }
        for (key, cause) in reported where cause == "timeToLive" || cause == "age" {
            if let k = Int(key.dropFirst()), let item = model.items[k], model.isGone(item) { model.items[k] = nil }
        }
    }

    func diskStep(_ op: ModelOp) throws -> String? {
        let store = self.store!
        switch op {
        case let .throughDisk(inner):
            // The facade hands its memory hits to the disk layer within 10 ms (its flusher
            // thread): a call made straight to the disk layer is modelled as coming after that.
            cache?.copies.flushUses()
            throughDisk = true
            defer { throughDisk = false }
            return try diskStep(inner)
        case let .put(k, size, ttl, pinned):
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ k) })
            let record = CacheModel.recordSize(k, size)
            let budget = CacheModel.itemBudget(byteLimit: config.byteLimit)
            let declinedBefore = store.statistics.admissionsDeclined
            do {
                if let cache = facade { try cache.setValue(data, forKey: CacheModel.key(k), timeToLive: ttl.map { .milliseconds($0) }, isPinned: pinned) }
                else { try store.setValue(data, forKey: CacheModel.key(k), timeToLive: ttl.map { .milliseconds($0) }, isPinned: pinned) }
            } catch {
                guard case .exceedsByteLimit = error else { throw error }
                if let budget, record > budget { return applyEvictions() }
                return "refused a \(record)-byte record under a \(budget.map(String.init) ?? "missing") budget"
            }
            if let budget, record > budget { return "accepted a \(record)-byte record over the \(budget)-byte budget" }
            if store.statistics.admissionsDeclined > declinedBefore { return declined(k, pinned: pinned) }
            model.counter += 1
            model.items[k] = .init(value: data, access: model.now, expiry: ttl.map { model.now + $0 }, pinned: pinned, order: model.counter, cost: record)
            if let problem = applyEvictions(sparing: k) { return problem }
            if let c = config.countLimit, model.items.count > c { return "holds \(model.items.count) items over the count limit \(c)" }
            if let budget, model.heldBytes > budget { return "live bytes \(model.heldBytes) over the budget \(budget)" }
        case let .get(k):
            let got = facade != nil ? try facade!.value(Data.self, forKey: CacheModel.key(k)) : try store.value(forKey: CacheModel.key(k))
            var expected: Data?
            if let item = model.items[k] {
                if model.isGone(item) { model.items[k] = nil } else {
                    expected = item.value
                    model.items[k]!.access = model.now
                }
            }
            if got != expected { return "returned \(got.map { "\($0.count) B" } ?? "nil"), model says \(expected.map { "\($0.count) B" } ?? "nil")" }
            if let problem = applyEvictions() { return problem }
        case let .remove(k):
            let removed = facade != nil ? try facade!.removeValue(forKey: CacheModel.key(k)) : try store.removeValue(forKey: CacheModel.key(k))
            let expected = model.items[k].map { !model.isGone($0) } ?? false
            model.items[k] = nil
            if removed != expected { return "returned \(removed), model says \(expected)" }
            // A tombstone is a write too: past the byte limit's headroom it compacts, and
            // compaction's sweep drops expired items (whether it does depends on when the hint
            // writer thread's files land, so this disagreed only now and then).
            if let problem = applyEvictions() { return problem }
        case let .pin(k, pinned):
            let changed = try store.setPinned(pinned, forKey: CacheModel.key(k))
            let live = model.items[k].map { !model.isGone($0) } ?? false
            if live { model.items[k]!.pinned = pinned }
            if changed != live { return "returned \(changed), model says \(live)" }
            // A pin record is a write: past the byte limit's headroom it compacts, and
            // compaction's sweep drops expired items.
            if let problem = applyEvictions() { return problem }
        case let .trimToCount(n):
            try store.trim(toCount: n)
            if let problem = applyEvictions() { return problem }
            if model.items.count != min(n, model.items.count) { return "holds \(model.items.count) items after trim(toCount: \(n))" }
        case let .trimToSize(n):
            try store.trim(toSize: n)
            if let problem = applyEvictions() { return problem }
            if model.heldBytes > n { return "holds \(model.heldBytes) bytes after trimming to \(n)" }
        case let .trimLargestFirst(n):
            try store.trimLargestFirst(toSize: n)
            if let problem = applyEvictions(largestFirst: true) { return problem }
            if model.heldBytes > n { return "holds \(model.heldBytes) bytes after trimming to \(n)" }
        case let .trimToDate(ms):
            let removed = try store.trim(toDate: Date(timeIntervalSince1970: Double(model.now - ms) / 1000))
            let cutoff = model.now - ms
            let victims = model.items.filter { !$0.value.pinned && $0.value.access < cutoff }.keys
            for k in victims { model.items[k] = nil }
            applyExpiries()
            if removed != victims.count { return "removed \(removed), model says \(victims.count)" }
        case .removeExpired:
            let removed = try store.removeExpired()
            let victims = model.items.filter { model.isGone($0.value) }.keys
            for k in victims { model.items[k] = nil }
            evictions.withLock { $0 = [] }
            if removed != victims.count { return "removed \(removed), model says \(victims.count)" }
        case let .removePrefix(prefix):
            let removed = facade != nil ? try facade!.removeValues(withPrefix: prefix) : try store.removeValues(withPrefix: prefix)
            let victims = model.items.filter { CacheModel.key($0.key).hasPrefix(prefix) }
            let live = victims.values.filter { !model.isGone($0) }.count
            for k in victims.keys { model.items[k] = nil }
            if removed != live { return "removed \(removed), model says \(live)" }
            // The removal record is a write too (see .remove).
            if let problem = applyEvictions() { return problem }
        case let .putTagged(k, size, tags):
            return try putTagged(k, size: size, tags: tags)
        case let .removeTag(t):
            let removed = facade != nil ? try facade!.removeValues(taggedWith: "t\(t)") : try store.removeValues(taggedWith: "t\(t)")
            let victims = model.items.filter { $0.value.tags.contains(t) }
            let live = victims.values.filter { !model.isGone($0) }.count
            for k in victims.keys { model.items[k] = nil }
            if removed != live { return "removed \(removed), model says \(live)" }
            if let problem = applyEvictions() { return problem }
        case .reopenFromHints:
            if let cache { try cache.close() } else { try store.close() }
            try removeIndexSnapshot(directory.path)
            try open()
            // Without the snapshot, access times are the hints' (older ones), and an item dropped
            // for its TTL without a tombstone is back in the index, still expired (format-spec.md,
            // "Eviction without a tombstone"): the model takes the store's times, and both drop
            // what has expired. Every live item and its value must be as before.
            _ = try self.store!.removeExpired()
            for (k, item) in model.items where model.isGone(item) { model.items[k] = nil }
            evictions.withLock { $0 = [] }
            for k in Array(model.items.keys) {
                if let m = try self.store!.metadata(forKey: CacheModel.key(k)) {
                    model.items[k]!.access = Int64((m.accessDate.timeIntervalSince1970 * 1000).rounded())
                }
            }
        case let .removeAllPinned(pinned):
            let removed = try store.removeAll(pinned: pinned)
            let victims = model.items.filter { $0.value.pinned == pinned }.keys
            for k in victims { model.items[k] = nil }
            applyExpiries()
            if removed != victims.count { return "removed \(removed), model says \(victims.count)" }
        case .compact:
            try store.compact()
            for (k, item) in model.items where model.isGone(item) { model.items[k] = nil }
            evictions.withLock { $0 = [] }
        case .removeAll:
            if let cache { try cache.removeAll() } else { try store.removeAll() }
            model.items = [:]
        case .reopen:
            if let cache { try cache.close() } else { try store.close() }
            try open()
        case let .advance(ms):
            clock.advance(.milliseconds(ms))
            model.now += ms
        case .trimToAge:
            break
        }
        return nil
    }

    /// A cache entry of `size` bytes listing `tags` (sorted, as the facade sorts them), fresh
    /// and kept far beyond the sequence's clock, written through the disk layer.
    func putTagged(_ k: Int, size: Int, tags: [Int]) throws -> String? {
        let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ k) })
        let record = CacheModel.entryRecordSize(k, size, tags: tags)
        let budget = CacheModel.itemBudget(byteLimit: config.byteLimit)
        let far = model.now + 1_000_000_000
        let declinedBefore = store!.statistics.admissionsDeclined
        do {
            _ = try data.withUnsafeBytes { try store!.putEntry($0, forKey: CacheModel.key(k), freshUntil: far, expiry: far, tags: tags.map { "t\($0)" }) }
        } catch let error as CaskError {
            guard case .exceedsByteLimit = error else { throw error }
            if let budget, record > budget { return applyEvictions() }
            return "refused a \(record)-byte entry under a \(budget.map(String.init) ?? "missing") budget"
        }
        if let budget, record > budget { return "accepted a \(record)-byte entry over the \(budget)-byte budget" }
        if store!.statistics.admissionsDeclined > declinedBefore { return declined(k, pinned: false) }
        model.counter += 1
        model.items[k] = .init(value: data, access: model.now, expiry: nil, pinned: false, order: model.counter, cost: record, tags: Set(tags))
        if let problem = applyEvictions(sparing: k) { return problem }
        if let c = config.countLimit, model.items.count > c { return "holds \(model.items.count) items over the count limit \(c)" }
        if let budget, model.heldBytes > budget { return "live bytes \(model.heldBytes) over the budget \(budget)" }
        return nil
    }

    /// Checks a put the frequency-aware policy declined: only that policy declines, only an
    /// unpinned put of a key the store does not hold (absent, or gone and already dropped), and
    /// a declined put changes nothing else.
    func declined(_ k: Int, pinned: Bool) -> String? {
        guard config.frequencyAware else { return "declined a put of k\(k) under LRU" }
        if pinned { return "declined a pinned put of k\(k)" }
        if let item = model.items[k] {
            guard model.isGone(item) else { return "declined a put of k\(k), which it holds" }
            model.items[k] = nil
        }
        return applyEvictions()
    }

    func memoryStep(_ op: ModelOp) throws -> String? {
        let cache = memory!
        switch op {
        case let .put(k, size, _, _):
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &+ k) })
            let accepted = cache.setValue(data, forKey: CacheModel.key(k), cost: size)
            let fits = size <= (config.memoryCostLimit ?? .max) && (config.countLimit ?? 1) > 0
            // The frequency-aware policy may decline a new key that would evict; then nothing changes.
            let full = model.items.count >= (config.countLimit ?? .max) || model.heldBytes + size > (config.memoryCostLimit ?? .max)
            if config.frequencyAware && fits && !accepted && model.items[k] == nil && full { return nil }
            if accepted != fits { return "setValue returned \(accepted), model says \(fits)" }
            guard fits else { model.items[k] = nil; return nil }
            model.counter += 1
            model.items[k] = .init(value: data, access: model.now, expiry: nil, pinned: false, order: model.counter, cost: size)
            evictLRU(while: { m in m.items.count > (self.config.countLimit ?? .max) || m.heldBytes > (self.config.memoryCostLimit ?? .max) })
        case let .get(k):
            let got = cache.value(forKey: CacheModel.key(k))
            var expected: Data?
            if let item = model.items[k] {
                if model.isGone(item) { model.items[k] = nil } else {
                    expected = item.value
                    model.counter += 1
                    model.items[k]!.access = model.now
                    model.items[k]!.order = model.counter
                }
            }
            if got != expected { return "returned \(got.map { "\($0.count) B" } ?? "nil"), model says \(expected.map { "\($0.count) B" } ?? "nil")" }
        case let .remove(k):
            let removed = cache.removeValue(forKey: CacheModel.key(k))
            if removed != model.items[k]?.value { return "removeValue returned \(removed?.count ?? -1) B, model \(model.items[k]?.value.count ?? -1) B" }
            model.items[k] = nil
        case let .trimToCount(n):
            cache.trim(toCount: n)
            evictLRU(while: { $0.items.count > n })
        case let .trimToSize(n):
            cache.trim(toCost: n)
            evictLRU(while: { $0.heldBytes > n })
        case let .trimToAge(ms), let .trimToDate(ms):
            cache.trim(toAge: .milliseconds(ms))
            for (k, item) in model.items where model.now - item.access > ms { model.items[k] = nil }
        case .removeAll:
            cache.removeAll()
            model.items = [:]
        case let .advance(ms):
            clock.advance(.milliseconds(ms))
            model.now += ms
        default:
            break
        }
        evictions.withLock { $0 = [] }
        return nil
    }

    /// Memory eviction: exact global LRU by use order.
    func evictLRU(while over: (CacheModel) -> Bool) {
        while over(model), let victim = model.items.min(by: { $0.value.order < $1.value.order })?.key {
            model.items[victim] = nil
        }
    }

    // MARK: Checks after every step

    func checkState() -> String? {
        if let memory {
            if memory.count != model.items.count { return "count \(memory.count), model \(model.items.count)" }
            if memory.totalCost != model.heldBytes { return "totalCost \(memory.totalCost), model \(model.heldBytes)" }
            for k in 0...9 where memory.contains(CacheModel.key(k)) != model.items[k].map({ !model.isGone($0) }) ?? false {
                return "contains(k\(k)) is \(memory.contains(CacheModel.key(k)))"
            }
            return nil
        }
        let store = self.store!
        if let broken = store.state.withLock({ $0.invariantViolation() }) { return "store state: \(broken)" }
        let keys = Set(store.keys().compactMap { Int($0.dropFirst()) })
        if keys != model.liveKeys { return "keys \(keys.sorted()), model \(model.liveKeys.sorted())" }
        if store.count != model.items.count { return "count \(store.count), model \(model.items.count) (held, gone included)" }
        for k in keys {
            // Through the facade when there is one: it hands its memory hits to the disk layer first.
            guard let m = (try? cache?.metadata(forKey: CacheModel.key(k)) ?? store.metadata(forKey: CacheModel.key(k))) ?? nil else {
                return "k\(k) has no metadata"
            }
            let item = model.items[k]!
            if m.isPinned != item.pinned { return "k\(k) pinned \(m.isPinned), model \(item.pinned)" }
            if Int64((m.accessDate.timeIntervalSince1970 * 1000).rounded()) != item.access { return "k\(k) accessed at \(m.accessDate), model \(item.access)" }
            if let cache, cache.contains(CacheModel.key(k)) != true { return "cache.contains(k\(k)) false" }
        }
        if let cache {
            if cache.memory.count > 2 { return "memory layer holds \(cache.memory.count) items over its limit 2" }
        }
        return nil
    }
}

@Suite struct CacheModelTests {
    static let sequencesPerChunk = 125
    static let counts = Locked<[String: Int]>([:])

    /// Runs `sequencesPerChunk` seeded sequences for `target`; on a disagreement, shrinks the
    /// sequence and reports the seed, the configuration and the shortest failing sequence.
    func check(_ name: String, chunk: Int, _ target: ModelConfig.Target) {
        var ops = 0
        for n in 0..<Self.sequencesPerChunk {
            let seed = UInt64(chunk * 1_000_003 + n) &* 0x9E37_79B9 &+ UInt64(name.utf8.count)
            var generator = ModelGenerator(seed: seed)
            let config = generator.config(target)
            let sequence = generator.sequence(config)
            ops += sequence.count
            guard let failure = ModelRun(config).run(sequence) else { continue }
            let shortest = shrink(sequence, config)
            Issue.record("""
                \(name): the model disagrees (seed \(seed), \(config))
                \(failure)
                shortest failing sequence (\(shortest.ops.count) of \(sequence.count) operations): \(shortest.ops.map(\.description).joined(separator: "; "))
                its failure: \(shortest.failure)
                """)
            return
        }
        let total = Self.counts.withLock { c -> Int in c[name, default: 0] += Self.sequencesPerChunk; return c.values.reduce(0, +) }
        print("CacheModelTests: \(name) chunk \(chunk): \(Self.sequencesPerChunk) sequences, \(ops) operations, 0 disagreements (\(total) sequences so far)")
    }

    /// The shortest failing prefix, then single operations dropped while it still fails.
    func shrink(_ ops: [ModelOp], _ config: ModelConfig) -> (ops: [ModelOp], failure: String) {
        var best = ops
        var failure = ModelRun(config).run(ops) ?? ""
        for length in 1...ops.count {
            if let f = ModelRun(config).run(Array(ops.prefix(length))) { best = Array(ops.prefix(length)); failure = f; break }
        }
        var i = 0
        while i < best.count {
            var candidate = best
            candidate.remove(at: i)
            if let f = ModelRun(config).run(candidate) { best = candidate; failure = f } else { i += 1 }
        }
        return (best, failure)
    }

    @Test(arguments: 0..<8) func diskStore(chunk: Int) { check("DiskStore", chunk: chunk, .disk) }
    @Test(arguments: 0..<8) func memoryCacheOneShard(chunk: Int) { check("MemoryCache 1 shard", chunk: chunk, .memory(shards: 1)) }
    @Test(arguments: 0..<8) func memoryCacheDefaultShards(chunk: Int) { check("MemoryCache 32 shards", chunk: chunk, .memory(shards: 32)) }
    @Test(arguments: 0..<16) func twoLevelCache(chunk: Int) { check("Cache", chunk: chunk, .cache) }
}
