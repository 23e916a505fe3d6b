import Foundation
import Synchronization
import Testing
@testable import Cask

@Suite struct MemoryCacheTests {
    @Test func leastRecentlyUsedGoesFirst() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 3), shards: 1)
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")
        #expect(cache.value(forKey: "a") == 1)      // a is now the most recent; b the least
        cache.setValue(4, forKey: "d")
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.value(forKey: "a") == 1 && cache.value(forKey: "c") == 3 && cache.value(forKey: "d") == 4)
        #expect(cache.count == 3)
    }

    @Test func costLimitAndTrims() {
        let evicted = Locked<[String]>([])
        let cache = MemoryCache<String>(limits: .init(costLimit: 100), shards: 1) { key, _, cause in
            evicted.withLock { $0.append("\(key):\(cause)") }
        }
        for i in 0..<10 { cache.setValue("v\(i)", forKey: "k\(i)", cost: 20) }
        #expect(cache.totalCost == 100 && cache.count == 5)
        #expect(evicted.withLock { $0 } == ["k0:cost", "k1:cost", "k2:cost", "k3:cost", "k4:cost"])
        cache.trim(toCount: 2)
        #expect(cache.count == 2 && cache.value(forKey: "k9") == "v9" && cache.value(forKey: "k8") == "v8")
        cache.trim(toCost: 20)
        #expect(cache.count == 1 && cache.contains("k8"))   // k9 was read before k8: k9 is older
        #expect(cache.removeValue(forKey: "k8") == "v8")
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test func ageLimitAndMemoryPressure() {
        let clock = ManualClock()
        let cache = MemoryCache<Int>(limits: .init(ageLimit: .seconds(10)), shards: 4, clock: clock.wallClock)
        cache.setValue(1, forKey: "old")
        clock.advance(.seconds(6))
        cache.setValue(2, forKey: "new")
        clock.advance(.seconds(5))
        #expect(cache.value(forKey: "old") == nil)
        #expect(cache.value(forKey: "new") == 2)
        clock.advance(.seconds(8))
        #expect(cache.value(forKey: "new") == 2)      // the read at +11 s renewed it
        clock.advance(.seconds(2))
        cache.trim(toAge: .seconds(1))
        #expect(cache.count == 0)
        for i in 0..<100 { cache.setValue(i, forKey: "k\(i)") }
        cache.handleMemoryPressure()
        #expect(cache.count == 0)
    }

    @Test func manyThreadsKeepItConsistent() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 500), shards: 8)
        let bad = Counters()
        runOnThreads(4) { t in
            for i in 0..<20_000 {
                let k = (i * 7 + t) % 1000
                if i % 3 == 0 { cache.setValue(k, forKey: "k\(k)", cost: 1) }
                else if let v = cache.value(forKey: "k\(k)"), v != k { bad.bad.add(1, ordering: .relaxed) }
                if i % 101 == 0 { cache.removeValue(forKey: "k\(k)") }
            }
        }
        #expect(bad.bad.load(ordering: .relaxed) == 0)
        #expect(cache.count <= 504)
        #expect(cache.totalCost == cache.count)
    }
}

struct User: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var tags: [String]
}

@Suite struct CacheFacadeTests {
    func makeCache(_ dir: TemporaryDirectory, coder: any CacheCoder = JSONCacheCoder(), events: Locked<[CacheEvent]>? = nil) throws -> CaskCache {
        var o = CacheOptions()
        o.disk.compaction.isAutomatic = false
        o.coder = coder
        if let events { o.eventHandler = { e in events.withLock { $0.append(e) } } }
        return try CaskCache(directory: dir.path, options: o)
    }

    /// A memory copy's age counts from no later than its record's last use on disk, so a copy
    /// never answers after the disk layer's age limit has run out for its record, even when
    /// the clock moves during the put (here it ticks 1 ms on every read).
    @Test(arguments: [false, true])
    func aMemoryCopyIsNeverYoungerThanItsDiskRecord(promoted: Bool) throws {
        let dir = TemporaryDirectory()
        let now = Atomic<Int64>(1_800_000_000_000)
        var o = CacheOptions()
        o.disk = options(clock: WallClock { now.add(1, ordering: .relaxed).newValue })
        o.disk.limits = StoreLimits(ageLimit: .milliseconds(100))
        let cache = try CaskCache(directory: dir.path, options: o)
        try cache.setData(Data("v".utf8), forKey: "k")
        if promoted {
            cache.handleMemoryPressure()   // empties the memory layer
            #expect(try cache.data(forKey: "k") == Data("v".utf8))   // read from disk, copied to memory
        }
        let used = Int64((try cache.disk.metadata(forKey: "k")!.accessDate.timeIntervalSince1970 * 1000).rounded())
        now.store(used + 100, ordering: .relaxed)   // the next reading is 101 ms after that use
        #expect(try cache.data(forKey: "k") == nil)
        try cache.close()
    }

    @Test(arguments: [false, true])
    func codableRoundTripsAndWriteThroughSurvivesReopen(binary: Bool) throws {
        let dir = TemporaryDirectory()
        let coder: any CacheCoder = binary ? BinaryCacheCoder() : JSONCacheCoder()
        let user = User(id: 42, name: "Ada", tags: ["admin", "ops"])
        do {
            let cache = try makeCache(dir, coder: coder)
            try cache.setValue(user, forKey: "user:42")
            try cache.setValue(7, forKey: "answer")
            #expect(try cache.value(User.self, forKey: "user:42") == user)
            #expect(cache.statistics.memoryHits == 1)
            try cache.close()
        }
        let cache = try makeCache(dir, coder: coder)
        #expect(try cache.value(User.self, forKey: "user:42") == user)   // from disk, promoted
        #expect(cache.statistics.memoryMisses == 1 && cache.memory.contains("user:42"))
        #expect(try cache.value(User.self, forKey: "user:42") == user)
        #expect(cache.statistics.memoryHits == 1)
        #expect(try cache.value(Int.self, forKey: "answer") == 7)
    }

    /// Reading with the wrong type is the caller's mistake: a typed error, and the item stays.
    /// Hits answered from memory alone are counted by the memory shards (no shared counter on
    /// the hit path), hits the disk layer confirms by the facade: every hit once, from several
    /// threads, through memory pressure and a read-only disk layer.
    @Test func everyMemoryHitIsCountedOnce() throws {
        let dir = TemporaryDirectory()
        do {
            let cache = try makeCache(dir)
            for k in 0..<50 { try cache.setValue(k, forKey: "k\(k)") }
            DispatchQueue.concurrentPerform(iterations: 4) { t in
                for i in 0..<1000 { _ = try? cache.value(Int.self, forKey: "k\((i * 7 + t) % 50)") }
            }
            #expect(cache.statistics.memoryHits == 4000 && cache.statistics.memoryMisses == 0)
            cache.handleMemoryPressure()
            for k in 0..<10 { _ = try cache.value(Int.self, forKey: "k\(k)") }   // misses, promoted
            for k in 0..<10 { _ = try cache.value(Int.self, forKey: "k\(k)") }
            #expect(cache.statistics.memoryHits == 4010 && cache.statistics.memoryMisses == 10)
            try cache.close()
        }
        var o = CacheOptions()
        o.disk.isReadOnly = true
        let reader = try CaskCache(directory: dir.path, options: o)
        for _ in 0..<3 { #expect(try reader.value(Int.self, forKey: "k3") == 3) }   // one miss, then hits the disk confirms
        #expect(reader.statistics.memoryHits == 2 && reader.statistics.memoryMisses == 1)
        try reader.close()
    }

    @Test func aTypeMismatchThrowsAndKeepsTheItem() throws {
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        try cache.setData(Data("not json".utf8), forKey: "k")
        try cache.setValue(User(id: 1, name: "Ada", tags: []), forKey: "u")
        for _ in 0..<2 {   // from disk, then with the User in memory
            do {
                _ = try cache.value(User.self, forKey: "k")
                Issue.record("decoding bytes as a User succeeded")
            } catch {
                guard case .typeMismatch(let key, let type, _) = error else { Issue.record("got \(error)"); continue }
                #expect(key == "k" && type == "User")
            }
            #expect(throws: CaskError.self) { try cache.value(Int.self, forKey: "u") }
            cache.handleMemoryPressure()
        }
        #expect(try cache.data(forKey: "k") == Data("not json".utf8))
        #expect(try cache.value(User.self, forKey: "u")?.name == "Ada")
    }

    @Test func eventsFireOnceEachInOrder() throws {
        let dir = TemporaryDirectory()
        let events = Locked<[CacheEvent]>([])
        let cache = try makeCache(dir, events: events)
        try cache.setData(Data("x".utf8), forKey: "a")
        try cache.removeValue(forKey: "a")
        try cache.removeAll()
        #expect(events.withLock { $0 } == [.willAdd(key: "a"), .didAdd(key: "a"), .willRemove(key: "a"), .didRemove(key: "a"), .didRemoveAll])
    }

    @Test func asyncAPIFromManyTasks() async throws {
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<50 {
                        try await cache.setValue(User(id: i, name: "u\(t)", tags: []), forKey: "t\(t)-\(i)")
                        let back = try await cache.value(User.self, forKey: "t\(t)-\(i)")
                        if back?.id != i { throw CaskError.coding(key: "t\(t)-\(i)", reason: "mismatch") }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.disk.count == 400)
        #expect(CaskCache.defaultDirectory(name: "x").hasSuffix("/x"))
    }

    @Test func ttlAndPinningPassThrough() throws {
        let dir = TemporaryDirectory()
        let cache = try makeCache(dir)
        try cache.setData(Data("v".utf8), forKey: "ttl", timeToLive: .milliseconds(1))
        try cache.setData(Data("p".utf8), forKey: "pin", isPinned: true)
        usleep(20_000)
        #expect(try cache.data(forKey: "ttl") == nil)
        #expect(try cache.metadata(forKey: "pin")?.isPinned == true)
    }
}

/// Regression tests for the memory layer's contract (issue 12): each failed before the fix.
@Suite struct MemoryCacheContractTests {
    @Test func intMaxMeansNoLimit() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: .max, costLimit: .max))
        cache.setValue(1, forKey: "a", cost: .max)
        cache.setValue(2, forKey: "b", cost: 10)
        #expect(cache.value(forKey: "a") == 1 && cache.value(forKey: "b") == 2)
        cache.trim(toCount: .max)
        cache.trim(toCost: .max)
        #expect(cache.count == 2)
        #expect(cache.totalCost == MemoryCache<Int>.maximumCost + 10)
    }

    @Test(arguments: [1, 2, 3, 17])
    func countLimitIsExactWithDefaultSharding(limit: Int) {
        let cache = MemoryCache<Int>(limits: .init(countLimit: limit))
        for i in 0..<100 {
            cache.setValue(i, forKey: "k\(i)")
            #expect(cache.count == min(i + 1, limit))
        }
        // The survivors are exactly the most recent ones, across shards.
        for i in 0..<100 { #expect(cache.contains("k\(i)") == (i >= 100 - limit)) }
    }

    @Test func costLimitIsGlobalAndLargeItemsFit() {
        let cache = MemoryCache<Int>(limits: .init(costLimit: 64 << 20))
        cache.setValue(1, forKey: "big", cost: 10 << 20)     // over costLimit / 32
        #expect(cache.value(forKey: "big") == 1)
        for i in 0..<10 { cache.setValue(i, forKey: "k\(i)", cost: 6 << 20) }
        #expect(cache.totalCost <= 64 << 20)
        #expect(cache.totalCost == (6 << 20) * 10 || cache.totalCost == (6 << 20) * 9 + (10 << 20))
    }

    @Test func anItemCostlierThanTheLimitIsRefusedAndEvictsNothing() {
        let cache = MemoryCache<Int>(limits: .init(costLimit: 100))
        cache.setValue(1, forKey: "a", cost: 40)
        cache.setValue(2, forKey: "b", cost: 40)
        cache.setValue(0, forKey: "huge", cost: 50)
        #expect(cache.count == 2 || cache.count == 3)
        cache.setValue(7, forKey: "c", cost: 10)
        let accepted = cache.setValue(3, forKey: "c", cost: 101)
        #expect(!accepted)
        #expect(cache.value(forKey: "c") == nil)              // the older value of c is gone too
        #expect(cache.value(forKey: "huge") == 0)
        #expect(cache.totalCost <= 100)
    }

    @Test func trimToAgeWithoutAnAgeLimitKeepsRecentItems() {
        let clock = ManualClock()
        let cache = MemoryCache<Int>(clock: clock.wallClock)
        cache.setValue(1, forKey: "old")
        cache.setValue(2, forKey: "read")
        clock.advance(.seconds(10))
        #expect(cache.value(forKey: "read") == 2)
        cache.setValue(3, forKey: "new")
        clock.advance(.milliseconds(500))
        cache.trim(toAge: .seconds(1))
        #expect(!cache.contains("old"))
        #expect(cache.contains("read") && cache.contains("new"))
    }

    @Test func ageLimitIsExactToTheMillisecond() {
        let clock = ManualClock()
        let cache = MemoryCache<Int>(limits: .init(ageLimit: .milliseconds(1500)), clock: clock.wallClock)
        cache.setValue(1, forKey: "a")
        clock.advance(.milliseconds(1500))
        #expect(cache.contains("a"))
        clock.advance(.milliseconds(1))
        #expect(!cache.contains("a"))
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.count == 0)
    }
}

extension MemoryCacheContractTests {
    /// Found by the model: reading a shard's oldest item did not republish the shard's oldest
    /// use, so a later eviction took a more recent item from that shard.
    @Test func readingAShardsOldestItemKeepsGlobalOrder() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 20), shards: 4)
        for i in 0..<20 { cache.setValue(i, forKey: "k\(i)") }
        for i in 0..<10 { #expect(cache.value(forKey: "k\(i)") == i) }   // k10...k19 are now the oldest
        for i in 20..<30 { cache.setValue(i, forKey: "k\(i)") }
        for i in 0..<10 { #expect(cache.contains("k\(i)")) }
        for i in 10..<20 { #expect(!cache.contains("k\(i)")) }
    }

    /// Reads note their use in their CPU's stripe and leave the list alone until a write
    /// applies them; a read of a shard's least recently used item must not, or the oldest use the
    /// shard publishes goes stale and eviction (which tries a stale shard only a few times) takes
    /// a more recent item elsewhere. Sixteen shards, every tail read at once.
    @Test func readsOfEveryShardsOldestItemKeepEvictionExact() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 64), shards: 16)
        for i in 0..<64 { cache.setValue(i, forKey: "k\(i)") }
        for i in 0..<32 { #expect(cache.value(forKey: "k\(i)") == i) }   // k32...k63 are now the oldest
        for i in 64..<96 { cache.setValue(i, forKey: "k\(i)") }
        let survivors = (0..<96).filter { cache.contains("k\($0)") }
        #expect(survivors == Array(0..<32) + Array(64..<96))
    }

    /// Reads on several threads at once (their uses buffered in different CPUs' stripes, then
    /// merged by the next write): after they finish, every item read outlives every item not
    /// read when new items push the cache over its count limit.
    @Test func readsFromManyThreadsAreAppliedBeforeTheNextEviction() async {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 400), shards: 8)
        for i in 0..<400 { cache.setValue(i, forKey: "k\(i)") }
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<4 {
                group.addTask {
                    for round in 0..<50 {
                        for i in stride(from: t, to: 200, by: 4) where cache.value(forKey: "k\(i)") != i {
                            Issue.record("round \(round): k\(i) missing")
                        }
                    }
                }
            }
        }
        for i in 400..<600 { cache.setValue(i, forKey: "k\(i)") }
        let survivors = (0..<600).filter { cache.contains("k\($0)") }
        #expect(survivors == Array(0..<200) + Array(400..<600))
    }

    /// A read keeps its time as an offset from its stripe's first buffered use; a clock that
    /// goes back (or jumps over 2^32 ms) sends the read through the write lock instead, and the
    /// LRU order stays the order of the reads.
    @Test func readsAcrossAClockThatGoesBackKeepTheirOrder() {
        let clock = ManualClock()
        let cache = MemoryCache<Int>(limits: .init(countLimit: 4), shards: 1, clock: clock.wallClock)
        for (n, key) in ["a", "b", "c", "d"].enumerated() { cache.setValue(n, forKey: key) }
        #expect(cache.value(forKey: "b") == 1)      // buffered
        clock.advance(.seconds(-500))
        #expect(cache.value(forKey: "c") == 2)      // before the stripe's base time: the write lock
        #expect(cache.value(forKey: "b") == 1)      // buffered, a new base time
        clock.advance(.milliseconds(Int64(UInt32.max) + 1_000))
        #expect(cache.value(forKey: "d") == 3)      // over 2^32 ms after it: the write lock
        // Oldest first: a (never read), c, b, d.
        cache.setValue(4, forKey: "e")
        #expect(!cache.contains("a"))
        cache.setValue(5, forKey: "f")
        #expect(!cache.contains("c") && cache.contains("b"))
        cache.setValue(6, forKey: "g")
        #expect(["a", "b", "c", "d", "e", "f", "g"].filter { cache.contains($0) } == ["d", "e", "f", "g"])
    }

    /// The time a read keeps is its own, even 2^32 ms after its stripe's first buffered use (a
    /// wrapped offset would make it look 2^32 ms older to `trim(toAge:)`).
    @Test func aReadLongAfterItsStripesFirstKeepsItsOwnTime() {
        let clock = ManualClock()
        let cache = MemoryCache<Int>(shards: 1, clock: clock.wallClock)
        for (n, key) in ["a", "b", "c", "d"].enumerated() { cache.setValue(n, forKey: key) }
        #expect(cache.value(forKey: "b") == 1)      // buffered: the stripe's base time
        clock.advance(.milliseconds(Int64(UInt32.max) + 5_000))
        #expect(cache.value(forKey: "c") == 2)
        cache.trim(toAge: .seconds(1))
        #expect(["a", "b", "c", "d"].filter { cache.contains($0) } == ["c"])
    }
}

/// ``EvictionPolicy/frequencyAware`` in the memory cache: reads count keys, and a new key that
/// would evict is stored only when it was asked for more often than the least recently used item.
@Suite struct MemoryAdmissionTests {
    /// Cache-aside: a get, and a set on a miss.
    func request(_ cache: MemoryCache<Int>, _ key: String) {
        if cache.value(forKey: key) == nil { cache.setValue(1, forKey: key) }
    }

    @Test(arguments: [EvictionPolicy.leastRecentlyUsed, .frequencyAware])
    func aScanFlushesThePopularKeysOnlyUnderLRU(policy: EvictionPolicy) {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 100, policy: policy))
        for _ in 0..<3 { for i in 0..<100 { request(cache, "hot\(i)") } }
        for i in 0..<1000 { request(cache, "scan\(i)") }   // each asked for once
        let kept = (0..<100).filter { cache.value(forKey: "hot\($0)") != nil }.count
        #expect(cache.count <= 100)
        if policy == .frequencyAware {
            // (A scan key whose four counters all collide with busier keys' may win: rare, not never.)
            #expect(kept >= 95 && cache.admissionsDeclined >= 950, "kept \(kept), declined \(cache.admissionsDeclined)")
        } else {
            #expect(kept == 0 && cache.admissionsDeclined == 0)
        }
    }

    @Test func overwritesAreNeverDeclinedAndADeclinedWriteChangesNothing() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 2, policy: .frequencyAware))
        for key in ["a", "b"] { for _ in 0..<3 { request(cache, key) } }
        #expect(cache.setValue(7, forKey: "a"), "an overwrite of a full cache")
        #expect(!cache.setValue(1, forKey: "new"), "never asked for: loses to the LRU item")
        #expect(cache.count == 2 && cache.value(forKey: "a") == 7 && cache.value(forKey: "b") == 1)
        #expect(cache.admissionsDeclined == 1)
        for _ in 0..<5 { _ = cache.value(forKey: "new") }   // asked for more often than b
        #expect(cache.setValue(2, forKey: "new"))
        #expect(cache.count == 2 && cache.value(forKey: "new") == 2)
    }

    @Test func aCacheWithRoomAdmitsEverything() {
        let cache = MemoryCache<Int>(limits: .init(countLimit: 10, policy: .frequencyAware))
        for i in 0..<10 { #expect(cache.setValue(i, forKey: "k\(i)")) }
        #expect(cache.count == 10 && cache.admissionsDeclined == 0)
    }
}
