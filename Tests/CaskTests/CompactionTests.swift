import CaskTesting
import Foundation
import Testing
@testable import Cask

@Suite struct CompactionTests {
    @Test(arguments: [false, true])
    func compactionKeepsEveryLiveValueAndNoDeletedKey(simulated: Bool) throws {
        let dir = TemporaryDirectory()
        let fs: any CaskFileSystem = simulated ? SimulatedFileSystem() : POSIXFileSystem()
        let path = simulated ? "/store" : dir.path
        let oracle = CrashOracle()
        let store = try DiskStore(directory: path, options: simulatedOptions(fs, durability: .everyWrite))
        runWorkload(store, oracle: oracle, seed: 5, operations: 1500, syncEvery: 1, everyWrite: true, compactEvery: 97)
        #expect(try oracle.violations(in: store) == [])
        let report = try store.compact()
        #expect(try oracle.violations(in: store) == [])
        #expect(report.segmentsCompacted >= 0)
        try store.close()
        let reopened = try DiskStore(directory: path, options: simulatedOptions(fs, durability: .none))
        #expect(try oracle.violations(in: reopened) == [])
        let indexPointsAtLiveFiles = reopened.state.withLock { s in s.index.entries.allSatisfy { s.segments[$0.segment] != nil } }
        #expect(indexPointsAtLiveFiles)
    }
}
