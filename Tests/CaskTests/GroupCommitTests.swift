import CaskTesting
import Foundation
import Testing
@testable import Cask

/// Durable writes from several threads (group commit, StoreState+GroupCommit.swift): every
/// acknowledged write survives a crash, a failed sync fails exactly the writes it covered, and
/// readers never see a durable write before it is durable.
@Suite struct GroupCommitTests {
    /// Each thread writes its own keys, so the model of each key has one writer.
    static func threadKey(_ thread: Int, _ i: Int) -> String { "t\(thread)-k\(i % 12)" }
    static func threadValue(_ thread: Int, _ i: Int) -> Data { Data("t\(thread)-v\(i)-".utf8) + Data(repeating: UInt8(truncatingIfNeeded: i), count: i % 200) }

    @Test func concurrentDurableWritersLoseNothingAcknowledgedInACrash() throws {
        var crashStates = 0, violations: [String] = []
        for run in 0..<40 {
            var rng = SeededBytes(seed: UInt64(run) &* 31 &+ 5)
            let fs = SimulatedFileSystem()
            fs.crash(afterCalls: 30 + Int(rng.next() % 900))
            let oracle = CrashOracle()
            let store = try DiskStore(directory: "/g", options: simulatedOptions(fs, durability: .everyWrite, segmentSize: 8192))
            runOnThreads(3) { thread in
                for i in 0..<150 {
                    let key = Self.threadKey(thread, i), value = Self.threadValue(thread, i)
                    let remove = i % 11 == 10
                    let op = oracle.begin(key, remove ? nil : value)
                    do {
                        if remove { try store.removeValue(forKey: key) } else { try store.setValue(value, forKey: key) }
                        oracle.acknowledge(op)
                        oracle.markDurable()
                    } catch {
                        return   // the crash: this operation stays in flight
                    }
                }
            }
            for model in SimulatedFileSystem.CrashModel.allCases {
                let rebooted = fs.reboot(model, seed: UInt64(run))
                crashStates += 1
                do {
                    let reopened = try DiskStore(directory: "/g", options: simulatedOptions(rebooted, durability: .none, segmentSize: 8192))
                    violations += try oracle.violations(in: reopened).map { "run \(run) \(model): \($0)" }
                    try reopened.close()
                } catch {
                    violations.append("run \(run) \(model): reopen failed: \(error)")
                }
            }
        }
        print("group commit: \(crashStates) crash states after 3 concurrent durable writers, \(violations.count) violations")
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }

    @Test func aFailedSyncFailsTheWritesItCoveredAndLaterWritesWork() throws {
        let base = SimulatedFileSystem()
        let faulty = FaultyFileSystem(wrapping: base)
        let store = try DiskStore(directory: "/f", options: simulatedOptions(faulty, durability: .everyWrite, segmentSize: 1 << 16))
        // What each key holds after its last successful put (each thread owns its keys).
        let model = Locked<[String: Data]>([:])
        let failures = Locked<Int>(0)
        faulty.inject(.init(operation: .sync, at: 20, errno: EIO, forever: false))
        runOnThreads(3) { thread in
            for i in 0..<80 {
                let key = Self.threadKey(thread, i), value = Self.threadValue(thread, i)
                do {
                    try store.setValue(value, forKey: key)
                    model.withLock { $0[key] = value }
                } catch {
                    failures.withLock { $0 += 1 }
                }
                // A failed write leaves the previous value; a successful one is readable at once.
                let now = try? store.value(forKey: key)
                let expected = model.withLock { $0[key] }
                if now != expected { Issue.record("\(key) holds \(String(describing: now)), expected \(String(describing: expected))") }
            }
        }
        #expect(failures.withLock { $0 } >= 1)
        #expect(faulty.faultsInjected == 1)
        // Writes work again without reopening, and every acknowledged value survives a reopen.
        try store.setValue(Data("after".utf8), forKey: "after")
        try store.close()
        let reopened = try DiskStore(directory: "/f", options: simulatedOptions(base, durability: .none, segmentSize: 1 << 16))
        #expect(try reopened.value(forKey: "after") == Data("after".utf8))
        for (key, value) in model.withLock({ $0 }) {
            #expect(try reopened.value(forKey: key) == value, "\(key)")
        }
    }

    @Test func durableWritersFromSeveralThreadsShareSyncs() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options(durability: .everyWrite))
        let perThread = 150
        runOnThreads(4) { thread in
            for i in 0..<perThread { try? store.setValue(Self.threadValue(thread, i), forKey: "t\(thread)-\(i)") }
        }
        let syncs = store.statistics.segmentSyncs
        print("group commit: \(4 * perThread) durable puts from 4 threads took \(syncs) fdatasyncs")
        #expect(store.count == 4 * perThread)
        #expect(syncs >= 1 && syncs <= UInt64(4 * perThread))
        try store.close()
        let reopened = try DiskStore(directory: dir.path, options: options())
        for thread in 0..<4 { for i in 0..<perThread {
            #expect(try reopened.value(forKey: "t\(thread)-\(i)") == Self.threadValue(thread, i))
        } }
    }
}
