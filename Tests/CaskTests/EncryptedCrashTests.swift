import CaskTesting
import Foundation
import Testing
@testable import Cask

/// The crash suites with encryption on (format-spec.md, "Sealed records"): power loss at a
/// random call under every crash model, and a key rotation (a compaction that re-seals) cut
/// after each of its calls, lose nothing durable and return no value that is not the one
/// written.
@Suite struct EncryptedCrashTests {
    func sealed(_ fs: SimulatedFileSystem, _ durability: Durability, current: EncryptionKey = testKey(1),
                previous: [EncryptionKey] = []) -> StoreOptions {
        var o = simulatedOptions(fs, durability: durability)
        o.encryption = try? StoreEncryption(currentKey: current, previousKeys: previous)
        #expect(o.encryption != nil)
        return o
    }

    @Test func powerLossWithEncryptionLosesNothingDurable() throws {
        let runs = longTier ? 3000 : 300
        let result = try crashAtRandomCalls(runs: runs, seed: { UInt64($0) &* 6151 &+ 29 }, compactEvery: { $0 % 4 == 0 ? 97 : 0 }) {
            sealed($0, $1)
        }
        print("power loss, encrypted: \(runs) runs, \(result.crashStates) crash states, \(result.violations.count) violations")
        #expect(result.violations.isEmpty, "\(result.violations.prefix(10))")
    }

    /// A store written under key 1 is opened with key 2 current and key 1 previous, and its
    /// rotation pass is cut after each of its file system calls. Every crash state opens with
    /// both keys and holds every durable value; a later pass finishes the rotation, after which
    /// key 2 alone opens it.
    @Test func rotationCrashedAfterEachOfItsCallsRecovers() throws {
        let rotating: (SimulatedFileSystem) -> StoreOptions = { self.sealed($0, .none, current: testKey(2), previous: [testKey(1)]) }
        func build(_ fs: SimulatedFileSystem) throws -> (DiskStore, CrashOracle) {
            let oracle = CrashOracle()
            let first = try DiskStore(directory: "/store", options: sealed(fs, .none))
            runWorkload(first, oracle: oracle, seed: 41, operations: 150, syncEvery: 150, everyWrite: false)
            try first.sync()
            oracle.markDurable()
            try first.close()
            let store = try DiskStore(directory: "/store", options: rotating(fs))
            return (store, oracle)
        }
        let probe = SimulatedFileSystem()
        let (probeStore, _) = try build(probe)
        let before = probe.callCount
        let report = try probeStore.compact()
        let calls = probe.callCount - before
        #expect(report.segmentsCompacted > 3 && calls > 10)
        #expect(probeStore.encryptionKeysInUse == [StoreEncryption.keyID(of: testKey(2))])
        var states = 0, violations: [String] = []
        for step in 1...calls {
            let fs = SimulatedFileSystem()
            let (store, oracle) = try build(fs)
            fs.crash(afterCalls: fs.callCount + step)
            _ = try? store.compact()   // cut short by the crash (or finished, when the crash hit the hint thread)
            for model in SimulatedFileSystem.CrashModel.allCases {
                states += 1
                let rebooted = fs.reboot(model, seed: UInt64(step))
                let reopened = try DiskStore(directory: "/store", options: rotating(rebooted))
                violations += try oracle.violations(in: reopened).map { "step \(step) (\(model)): \($0)" }
                try reopened.compact()
                if reopened.encryptionKeysInUse != [StoreEncryption.keyID(of: testKey(2))] {
                    violations.append("step \(step) (\(model)): keys in use after a finished pass: \(reopened.encryptionKeysInUse)")
                }
                try reopened.close()
                let retired = try DiskStore(directory: "/store", options: sealed(rebooted, .none, current: testKey(2)))
                violations += try oracle.violations(in: retired).map { "step \(step) (\(model), key 1 retired): \($0)" }
                if retired.statistics.corruptRecords != 0 { violations.append("step \(step) (\(model)): \(retired.statistics.corruptRecords) corrupt records") }
                try retired.close()
            }
        }
        print("rotation crashes: \(calls) calls, \(states) crash states, \(violations.count) violations")
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }
}
