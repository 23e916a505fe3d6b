import CaskTesting
import Foundation
import Testing
@testable import Cask

/// A seeded workload of puts and removes against `store`, recorded in `oracle`; stops at the
/// first failure (the crash). Syncs every `syncEvery` operations.
func runWorkload(_ store: DiskStore, oracle: CrashOracle, seed: UInt64, operations: Int, syncEvery: Int, everyWrite: Bool, compactEvery: Int = 0, valueScale: Int = 1) {
    var rng = SeededBytes(seed: seed)
    var tagOf: [String: String] = [:]   // the tag of each key's acknowledged value, for tagged entries
    let far = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
    for i in 0..<operations {
        let key = "key-\(rng.next() % 60)"
        let remove = rng.next() % 7 == 0
        let value: Data? = remove ? nil : (rng.next() % 2 == 0 ? rng.random(Int(rng.next() % 300) * valueScale) : rng.compressible(Int(rng.next() % 900) * valueScale))
        let op = oracle.begin(key, value)
        do {
            // Every fifth put is a cache entry tagged tag-0 ... tag-2 (no draw from `rng`).
            let tag = value != nil && i % 5 == 1 ? "tag-\(i % 3)" : nil
            if let value, let tag {
                _ = try value.withUnsafeBytes { try store.putEntry($0, forKey: key, freshUntil: far, expiry: far, tags: [tag]) }
            } else if let value { try store.setValue(value, forKey: key) } else { try store.removeValue(forKey: key) }
            oracle.acknowledge(op)
            tagOf[key] = tag
            // Removals by tag now and then, synced like those by prefix.
            if i % 89 == 40 {
                let tag = "tag-\(i % 3)"
                let removals = tagOf.filter { $0.value == tag }.map { oracle.begin($0.key, nil) }
                try store.removeValues(taggedWith: tag)
                removals.forEach(oracle.acknowledge)
                tagOf = tagOf.filter { $0.value != tag }
                oracle.markDurable()
            }
            // Pins and unpins now and then (no draw from `rng`: the workload's values stay the same).
            if i % 11 == 3 { try store.setPinned(i % 2 == 0, forKey: "key-\(i % 60)") }
            // Removals by prefix now and then ("key-1" is key-1 and key-10 to key-19). Each is
            // synced: everything acknowledged before it is durable too.
            if i % 97 == 50 {
                let prefix = "key-\(i % 6 + 1)"
                let removals = oracle.keys.filter { $0.hasPrefix(prefix) }.map { oracle.begin($0, nil) }
                try store.removeValues(withPrefix: prefix)
                removals.forEach(oracle.acknowledge)
                tagOf = tagOf.filter { !$0.key.hasPrefix(prefix) }
                oracle.markDurable()
            }
            if everyWrite { oracle.markDurable() }
            if !everyWrite && (i + 1) % syncEvery == 0 {
                try store.sync()
                oracle.markDurable()
            }
            if compactEvery > 0 && (i + 1) % compactEvery == 0 { try store.compact() }
        } catch {
            return
        }
    }
}

/// Runs `runs` seeded workloads (``runWorkload``) on a simulated file system that crashes at a
/// random call, then reboots under every loss model and reopens twice, checking each state
/// against the oracle. `evictable`: the store has limits, so any key may also be absent.
func crashAtRandomCalls(
    runs: Int, seed: (Int) -> UInt64, compactEvery: (Int) -> Int, evictable: Bool = false, valueScale: Int = 1,
    options: (SimulatedFileSystem, Durability) -> StoreOptions
) throws -> (crashStates: Int, violations: [String], evictionsWithoutTombstone: Int, rolloversBehindGate: Int) {
    var crashStates = 0, withoutTombstone = 0, gated = 0, violations: [String] = []
    for run in 0..<runs {
        let seed = seed(run)
        var rng = SeededBytes(seed: seed)
        let syncEvery = [1, 8, 64][run % 3]
        let everyWrite = syncEvery == 1
        let operations = 50 + Int(rng.next() % 1950)
        let fs = SimulatedFileSystem()
        fs.crash(afterCalls: 10 + Int(rng.next() % UInt64(everyWrite ? operations * 2 : operations / 3 + 40)))
        let oracle = CrashOracle()
        do {
            let store = try DiskStore(directory: "/store", options: options(fs, everyWrite ? .everyWrite : .none))
            runWorkload(store, oracle: oracle, seed: seed, operations: operations, syncEvery: syncEvery, everyWrite: everyWrite,
                        compactEvery: compactEvery(run), valueScale: valueScale)
            withoutTombstone += store.statistics.evictionsWithoutTombstone
            gated += store.statistics.rolloversBehindGate
            _ = try? store.close()
        } catch {
            // The crash came during open: nothing was acknowledged.
        }
        for model in SimulatedFileSystem.CrashModel.allCases {
            crashStates += 1
            let rebooted = fs.reboot(model, seed: seed)
            let store = try DiskStore(directory: "/store", options: options(rebooted, .none))
            violations += try oracle.violations(in: store, evictable: evictable).map { "run \(run) (\(model)): \($0)" }
            // A second reopen after recovery sees the same thing.
            try store.close()
            let again = try DiskStore(directory: "/store", options: options(rebooted, .none))
            violations += try oracle.violations(in: again, evictable: evictable).map { "run \(run) (\(model), second open): \($0)" }
            try again.close()
        }
    }
    return (crashStates, violations, withoutTombstone, gated)
}

@Suite struct PowerLossTests {
    @Test func crashAtARandomCallUnderEveryModelLosesNothingDurable() throws {
        let runs = longTier ? 10_000 : 1000
        let result = try crashAtRandomCalls(runs: runs, seed: { UInt64($0) &* 7919 &+ 17 }, compactEvery: { $0 % 5 == 0 ? 97 : 0 }) {
            simulatedOptions($0, durability: $1)
        }
        print("power loss: \(runs) runs, \(result.crashStates) crash states, \(result.violations.count) violations")
        #expect(result.violations.isEmpty, "\(result.violations.prefix(10))")
    }

    /// Segments of 1 MiB, sealed in the background behind the gate (format-spec.md, "Rollover"):
    /// a crash at any call, with unsynced writes lost or kept in any order, loses nothing
    /// durable and brings nothing back, also with the next segment prepared (only its header)
    /// while the active one has a torn tail: without open's rule for such a segment this finds
    /// hundreds of violations. The order the gate keeps (nothing written to the new segment
    /// before the sealed one is synced) is proven by the trace check instead
    /// (SyscallOrderTests, rule 4): here the hint writer syncs the sealed segment so soon that
    /// a crash rarely falls in between.
    @Test func crashesAroundBackgroundRolloversLoseNothingDurable() throws {
        let runs = longTier ? 2000 : 200
        let result = try crashAtRandomCalls(runs: runs, seed: { UInt64($0) &* 104_729 &+ 3 }, compactEvery: { _ in 0 }, valueScale: 12) {
            simulatedOptions($0, durability: $1, segmentSize: 1 << 20)
        }
        print("power loss with background rollovers: \(runs) runs, \(result.rolloversBehindGate) rollovers behind the gate, \(result.crashStates) crash states, \(result.violations.count) violations")
        #expect(result.violations.isEmpty, "\(result.violations.prefix(10))")
        #expect(result.rolloversBehindGate >= runs / 4, "the workload reaches the gated rollover")
    }

    @Test func compactionCrashedAfterEachOfItsCallsRecovers() throws {
        // Build a store with overwrites and removes over many segments, all synced.
        func build(_ fs: SimulatedFileSystem) throws -> (DiskStore, CrashOracle) {
            let store = try DiskStore(directory: "/store", options: simulatedOptions(fs, durability: .none))
            let oracle = CrashOracle()
            runWorkload(store, oracle: oracle, seed: 99, operations: 150, syncEvery: 150, everyWrite: false)
            try store.sync()
            store.waitForBackgroundWork()
            return (store, oracle)
        }
        let probe = SimulatedFileSystem()
        let (probeStore, _) = try build(probe)
        let before = probe.callCount
        let report = try probeStore.compact()
        let compactionCalls = probe.callCount - before
        #expect(report.segmentsCompacted > 3 && compactionCalls > 10)
        print("compaction probe: \(compactionCalls) calls, \(report.segmentsCompacted) segments")
        var states = 0, violations: [String] = [], crashedCompactions = 0
        for step in 1...compactionCalls {
            let fs = SimulatedFileSystem()
            let (store, oracle) = try build(fs)
            fs.crash(afterCalls: fs.callCount + step)
            // The hint writer thread writes the output's hint file while the pass goes on, so a
            // late crash point can land on its call instead: the pass then finishes (the hint
            // is only counted as a background failure). The crash state is checked either way.
            do { try store.compact() } catch { crashedCompactions += 1 }
            for model in SimulatedFileSystem.CrashModel.allCases {
                states += 1
                let rebooted = fs.reboot(model, seed: UInt64(step))
                let reopened = try DiskStore(directory: "/store", options: simulatedOptions(rebooted, durability: .none))
                violations += try oracle.violations(in: reopened).map { "step \(step) (\(model)): \($0)" }
                // Leftovers are cleaned and a later compaction works.
                let names = try rebooted.contentsOfDirectory("/store")
                #expect(!names.contains { $0.hasSuffix(".tmp") }, "step \(step): leftovers \(names)")
                try reopened.compact()
                violations += try oracle.violations(in: reopened).map { "step \(step) (\(model), after compacting again): \($0)" }
                try reopened.close()
            }
        }
        print("compaction crashes: \(compactionCalls) calls, \(states) crash states, \(violations.count) violations, \(crashedCompactions) passes cut short")
        #expect(violations.isEmpty, "\(violations.prefix(10))")
        #expect(crashedCompactions * 10 >= compactionCalls * 9, "only \(crashedCompactions) of \(compactionCalls) crash points cut the pass short")
    }
}
