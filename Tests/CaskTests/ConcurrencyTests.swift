import Foundation
import Synchronization
import Testing
@testable import Cask

/// Shared flags and counts for tests that run many tasks.
final class Counters: Sendable {
    let done = Atomic<Bool>(false)
    let bad = Atomic<Int>(0)
    let reads = Atomic<Int>(0)
}

@Suite struct ConcurrencyTests {
    /// A value that names its key and version, so a reader can tell a torn or mixed-up value.
    static func value(key: Int, version: Int) -> Data {
        let text = "key=\(key);version=\(version);"
        return Data((String(repeating: text, count: 1 + (key + version) % 9)).utf8)
    }

    static func check(_ data: Data, key: Int) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        guard let first = text.split(separator: ";").first, first == "key=\(key)",
              let versionPart = text.split(separator: ";").dropFirst().first,
              let version = Int(versionPart.dropFirst("version=".count)) else { return false }
        return data == value(key: key, version: version)
    }

    @Test func manyReadersWhileOneWriterWrites() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 64 << 10))
        let keys = 500
        for k in 0..<keys { try store.setValue(Self.value(key: k, version: 0), forKey: "k\(k)") }
        let counters = Counters()
        runOnThreads(5) { thread in
            if thread == 0 {
                while counters.reads.load(ordering: .relaxed) < 100 { sched_yield() }
                for round in 1...40 {
                    for k in stride(from: round % 3, to: keys, by: 3) {
                        if k % 17 == 0 { _ = try? store.removeValue(forKey: "k\(k)") }
                        try? store.setValue(Self.value(key: k, version: round), forKey: "k\(k)")
                    }
                }
                counters.done.store(true, ordering: .releasing)
            } else {
                    var k = thread
                    var mine = 0
                    while !counters.done.load(ordering: .acquiring) || mine < 2000 {
                        mine += 1
                        k = (k &* 31 &+ 7) % keys
                        if let v = try? store.value(forKey: "k\(k)") {
                            if !Self.check(v, key: k) { counters.bad.add(1, ordering: .relaxed) }
                        }
                        do { _ = try store.metadata(forKey: "k\(k)") } catch { counters.bad.add(1, ordering: .relaxed) }
                        counters.reads.add(1, ordering: .relaxed)
                    }
            }
        }
        #expect(counters.bad.load(ordering: .relaxed) == 0)
        #expect(counters.reads.load(ordering: .relaxed) > 1000)
        for k in 0..<keys {
            let v = try store.value(forKey: "k\(k)")
            #expect(v != nil && Self.check(v!, key: k))
        }
        try store.close()
    }

    /// The cache facade answers memory hits without asking the disk layer (a copy is made
    /// under the disk layer's lock and dropped by the record's next change): a read that starts
    /// after a write has returned, through the facade or through its disk layer directly,
    /// never sees an older version, while other readers promote copies from disk and a small
    /// memory layer evicts them.
    @Test func facadeReadsNeverGoBehindACompletedWrite() throws {
        let dir = TemporaryDirectory()
        var o = CacheOptions()
        o.disk = options(segmentSize: 64 << 10)
        o.memory = .init(countLimit: 12)
        let cache = try CaskCache(directory: dir.path, options: o)
        let keys = 20
        for k in 0..<keys { try cache.setData(Self.value(key: k, version: 0), forKey: "k\(k)") }
        let completed = Locked([Int](repeating: 0, count: keys))
        let counters = Counters()
        runOnThreads(4) { thread in
            if thread == 0 {
                // At least 3,000 writes, and on until the readers have read 300 times (on a
                // loaded machine they ran 36 reads in the writer's 3,000 writes): the reads
                // must overlap the writes, however the threads are scheduled.
                var version = 0
                while version < 3000 || (counters.reads.load(ordering: .relaxed) < 300 && version < 1_000_000) {
                    version += 1
                    let k = (version &* 7) % keys
                    let v = Self.value(key: k, version: version)
                    if version % 3 == 0 { try? cache.disk.setValue(v, forKey: "k\(k)") } else { try? cache.setData(v, forKey: "k\(k)") }
                    completed.withLock { $0[k] = version }
                }
                counters.done.store(true, ordering: .releasing)
            } else {
                var k = thread
                while !counters.done.load(ordering: .acquiring) {
                    k = (k &* 31 &+ 7) % keys
                    let floor = completed.withLock { $0[k] }
                    guard let data = try? cache.data(forKey: "k\(k)"), Self.check(data, key: k) else {
                        counters.bad.add(1, ordering: .relaxed)
                        continue
                    }
                    let text = String(decoding: data, as: UTF8.self)
                    let version = Int(text.split(separator: ";")[1].dropFirst("version=".count)) ?? -1
                    if version < floor { counters.bad.add(1, ordering: .relaxed) }
                    counters.reads.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(counters.bad.load(ordering: .relaxed) == 0)
        #expect(counters.reads.load(ordering: .relaxed) >= 300)
        try cache.close()
    }

    @Test func aSecondOpenFromAnotherProcessFailsCleanly() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options())
        try store.setValue(Data("kept".utf8), forKey: "a")
        try store.sync()
        let (status, _, err) = try runCask(["put", dir.path, "b", "value"])
        #expect(status == 3)
        #expect(err.contains("is open in process \(getpid())"), "stderr: \(err)")
        // Reading verbs open read-only: they work beside the writer (issue 14).
        let (verifyStatus, _, verifyErr) = try runCask(["verify", dir.path])
        #expect(verifyStatus == 0, "\(verifyErr)")
        #expect(try store.value(forKey: "a") == Data("kept".utf8))
        #expect(store.contains("b") == false)
        try store.close()
        // Once closed, the other process may open it.
        let (after, _, _) = try runCask(["put", dir.path, "b", "value"])
        #expect(after == 0)
        let reopened = try DiskStore(directory: dir.path, options: options())
        #expect(try reopened.value(forKey: "b") == Data("value".utf8))
        #expect(try reopened.value(forKey: "a") == Data("kept".utf8))
    }
}

@Suite struct CompactionConcurrencyTests {
    /// Eight threads get, put, remove and enumerate while limits evict and compaction runs, with
    /// an event handler that calls back into the store; a watchdog fails the test on deadlock.
    @Test func eightThreadsWithEvictionCompactionAndReentrantCallbacks() throws {
        let dir = TemporaryDirectory()
        let box = StoreBox()
        var o = options(segmentSize: 16 << 10, compacting: true)
        o.limits = StoreLimits(byteLimit: 256 << 10, countLimit: 400)
        o.compaction.checkInterval = .milliseconds(5)
        o.eventHandler = { event in
            // Re-entrant: the handler reads the store it is called from.
            if case .evicted(let key, _) = event { _ = try? box.store?.value(forKey: key) }
        }
        let store = try DiskStore(directory: dir.path, options: o)
        box.store = store
        let counters = Counters()
        let watchdog = DispatchSemaphore(value: 0)
        Thread {
            runOnThreads(8) { t in
                var x = UInt64(t + 1) &* 0x9E37_79B9_7F4A_7C15
                for i in 0..<3000 {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17
                    let k = Int(x % 600)
                    switch (i + t) % 10 {
                    case 0...3: try? store.setValue(ConcurrencyTests.value(key: k, version: i), forKey: "k\(k)")
                    case 4: _ = try? store.removeValue(forKey: "k\(k)")
                    case 5 where i % 200 == 0: _ = store.keys(); _ = store.statistics
                    case 6 where i % 500 == 0: _ = try? store.compact()
                    default:
                        if let v = try? store.value(forKey: "k\(k)"), !ConcurrencyTests.check(v, key: k) { counters.bad.add(1, ordering: .relaxed) }
                    }
                }
            }
            watchdog.signal()
        }.start()
        #expect(watchdog.wait(timeout: .now() + 240) == .success, "deadlock: the workload did not finish")
        #expect(counters.bad.load(ordering: .relaxed) == 0)
        let stats = store.statistics
        #expect(stats.compactions > 0 && stats.evictionsByCount + stats.evictionsBySize > 0)
        #expect(store.count <= 400)
        let consistent = store.state.withLock { s in s.index.entries.allSatisfy { s.segments[$0.segment] != nil } }
        #expect(consistent)
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: options(segmentSize: 16 << 10))
        for key in reopened.keys() {
            let k = Int(key.dropFirst())!
            #expect(try reopened.value(forKey: key).map { ConcurrencyTests.check($0, key: k) } == true)
        }
    }
}

/// Lets an event handler reach the store it belongs to.
final class StoreBox: @unchecked Sendable {
    // Set once before any event can fire.
    var store: DiskStore?

    /// `keys()` reads the index in slices of the lock, from the last entry to the first. A
    /// removal meanwhile moves the last entry into its hole; walked forwards, the walk would
    /// miss a key moved from the part not yet walked into the part already walked. Here the
    /// kept keys sit at the end of the index and the removals are of keys before them, so
    /// that each removal moves a kept key towards the front while `keys()` runs.
    @Test func keysListsEveryKeyLiveThroughoutWhileRemovalsMoveEntries() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options())
        let value = Data("v".utf8)
        for i in 0..<6000 { try store.setValue(value, forKey: "gone\(i)") }
        for i in 0..<3000 { try store.setValue(value, forKey: "kept\(i)") }
        for i in 0..<200 { try store.removeValue(forKey: "gone\(i)") }   // removed before any call
        let done = Atomic<Bool>(false)
        let remover = Thread {
            for i in 200..<6000 { _ = try? store.removeValue(forKey: "gone\(i)") }
            done.store(true, ordering: .releasing)
        }
        remover.start()
        let kept = Set((0..<3000).map { "kept\($0)" })
        var calls = 0
        repeat {
            let keys = store.keys()
            calls += 1
            let listed = Set(keys)
            #expect(listed.count == keys.count, "each key once")
            #expect(kept.isSubset(of: listed), "missing: \(kept.subtracting(listed).sorted().prefix(5))")
            #expect(!(0..<200).contains { listed.contains("gone\($0)") }, "a key removed before the call")
        } while !done.load(ordering: .acquiring)
        #expect(Set(store.keys()) == kept)
        #expect(calls > 0)
    }
}
