import CaskTesting
import Foundation
import Testing
@testable import Cask

/// Every sequence of up to three operations, crashed after every file-system call it makes,
/// under every crash model (CrashMonkey's finding: nearly all crash bugs need three operations
/// or fewer).
@Suite struct ShortSequenceTests {
    enum Op: String, CaseIterable { case putSmall, putCrossingSegment, delete, overwrite, pin, sync, compact, reopen }

    /// Runs `ops` after a synced base state; returns the oracle. Stops at the first failure.
    static func run(_ ops: [Op], fs: SimulatedFileSystem, crashAt: Int?, encrypted: Bool = false) -> CrashOracle {
        let oracle = CrashOracle()
        var o = options(fs, encrypted: encrypted)
        o.writeBufferSize = 4096
        guard var store = try? DiskStore(directory: "/s", options: o) else { return oracle }
        func put(_ key: String, _ value: Data) throws {
            let op = oracle.begin(key, value)
            try store.setValue(value, forKey: key)
            oracle.acknowledge(op)
        }
        do {
            try put("a", Data("base-a".utf8))
            try put("b", Data(repeating: 1, count: 900))
            try store.sync()
            oracle.markDurable()
            store.waitForBackgroundWork()
            if let crashAt { fs.crash(afterCalls: fs.callCount + crashAt) }
            for (i, op) in ops.enumerated() {
                switch op {
                case .putSmall: try put("new\(i)", Data("small \(i)".utf8))
                case .putCrossingSegment: try put("big\(i)", Data(repeating: UInt8(i), count: 5000))
                case .delete:
                    let id = oracle.begin("b", nil)
                    try store.removeValue(forKey: "b")
                    oracle.acknowledge(id)
                case .overwrite: try put("a", Data("overwritten \(i)".utf8))
                case .pin: try store.setPinned(i % 2 == 0, forKey: "a")   // changes no value
                case .sync:
                    try store.sync()
                    oracle.markDurable()
                case .compact:
                    try store.compact()    // not a durability point: with nothing to compact it syncs nothing
                case .reopen:
                    try store.close()
                    oracle.markDurable()
                    store = try DiskStore(directory: "/s", options: o)
                }
            }
            store.waitForBackgroundWork()
        } catch {}
        return oracle
    }

    /// The store's options on `fs`; encrypted: sealing with a fixed test key.
    static func options(_ fs: any CaskFileSystem, encrypted: Bool) -> StoreOptions {
        var o = simulatedOptions(fs, durability: .none, segmentSize: 4096)
        if encrypted { o.encryption = try? StoreEncryption(currentKey: testKey(9)) }
        return o
    }

    /// With encryption on, the operations that write what it seals (values, pin records, hint
    /// files at rollovers and compaction, the snapshot at a close): 155 sequences instead of 584.
    @Test(arguments: [false, true])
    func everySequenceOfUpToThreeOperationsRecovers(encrypted: Bool) throws {
        let alphabet: [Op] = encrypted ? [.putCrossingSegment, .overwrite, .pin, .compact, .reopen] : Op.allCases
        var sequences: [[Op]] = alphabet.map { [$0] }
        for a in alphabet { for b in alphabet { sequences.append([a, b]) } }
        for a in alphabet { for b in alphabet { for c in alphabet { sequences.append([a, b, c]) } } }
        var states = 0
        var violations: [String] = []
        for ops in sequences {
            let probe = SimulatedFileSystem()
            _ = Self.run(ops, fs: probe, crashAt: nil, encrypted: encrypted)
            let total = probe.callCount
            // Crash at every call the sequence makes (calls after the base state).
            let baseProbe = SimulatedFileSystem()
            _ = Self.run([], fs: baseProbe, crashAt: nil, encrypted: encrypted)
            let calls = max(1, total - baseProbe.callCount)
            for j in 1...calls {
                let fs = SimulatedFileSystem()
                let oracle = Self.run(ops, fs: fs, crashAt: j, encrypted: encrypted)
                for model in SimulatedFileSystem.CrashModel.allCases {
                    states += 1
                    let rebooted = fs.reboot(model, seed: UInt64(j))
                    do {
                        let store = try DiskStore(directory: "/s", options: Self.options(rebooted, encrypted: encrypted))
                        violations += try oracle.violations(in: store).map { "\(ops.map(\.rawValue)) crash at \(j) (\(model)): \($0)" }
                        if store.statistics.corruptRecords > 0 {   // a torn record is cut as a torn tail, never damage
                            violations.append("\(ops.map(\.rawValue)) crash at \(j) (\(model)): \(store.statistics.corruptRecords) corrupt records")
                        }
                        try store.close()
                    } catch {
                        violations.append("\(ops.map(\.rawValue)) crash at \(j) (\(model)): open failed: \(error)")
                    }
                }
            }
        }
        print("short sequences\(encrypted ? " (encrypted)" : ""): \(sequences.count) sequences, \(states) crash states, \(violations.count) violations")
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }
}
