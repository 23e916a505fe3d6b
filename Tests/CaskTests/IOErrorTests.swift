import CaskTesting
import Foundation
import Testing
@testable import Cask

@Suite struct IOErrorTests {
    /// Every failing call surfaces as a typed error, earlier data stays readable, writes work
    /// again once the fault clears (no reopen), and a reopen passes the oracle.
    @Test func injectedFaultsAreTypedErrorsAndNothingStoredIsLost() throws {
        var faults = 0, checks = 0
        let kinds: [FaultyFileSystem.Operation] = [.append, .sync, .syncDirectory, .open, .truncate, .rename]
        for operation in kinds {
            for errno in [ENOSPC, EIO, EFBIG] {
                for at in 1...12 {
                    for forever in [false, true] {
                        let base = SimulatedFileSystem()
                        let faulty = FaultyFileSystem(wrapping: base)
                        let store = try DiskStore(directory: "/s", options: simulatedOptions(faulty, durability: .everyWrite, segmentSize: 4096))
                        let oracle = CrashOracle()
                        faulty.inject(.init(operation: operation, at: at, errno: errno, forever: forever))
                        var failures = 0
                        for i in 0..<60 {
                            let key = "k\(i % 20)"
                            let value = Data(repeating: UInt8(i), count: 40 + i)
                            let op = oracle.begin(key, value)
                            do {
                                try store.setValue(value, forKey: key)
                                oracle.acknowledge(op)
                                oracle.markDurable()
                            } catch let error as CaskError {
                                failures += 1
                                if case .io(_, _, let code) = error { #expect(code == errno) } else { Issue.record("unexpected \(error)") }
                            }
                            // Whatever happened, every key holds an allowed value right now.
                            if i % 10 == 9 { checks += 1; #expect(try oracle.violations(in: store).isEmpty, "\(operation) \(errno) at \(at)") }
                        }
                        faults += faulty.faultsInjected
                        faulty.clear()
                        // Writes work again without reopening.
                        let op = oracle.begin("after", Data("ok".utf8))
                        try store.setValue(Data("ok".utf8), forKey: "after")
                        oracle.acknowledge(op)
                        oracle.markDurable()
                        #expect(try store.value(forKey: "after") == Data("ok".utf8))
                        try store.close()
                        let reopened = try DiskStore(directory: "/s", options: simulatedOptions(base, durability: .none, segmentSize: 4096))
                        #expect(try oracle.violations(in: reopened).isEmpty, "\(operation) \(errno) at \(at) forever \(forever): after reopen")
                        try reopened.close()
                        _ = failures
                    }
                }
            }
        }
        print("I/O errors: \(faults) faults injected, \(checks) consistency checks")
        #expect(faults > 500)
    }

    /// A 500-operation workload (puts, removes, gets, syncs every 16, compaction every 125, 4 KiB
    /// segments): every operation in it, no writes lost. Returns false at the first error.
    static func fiveHundredOperations(_ store: DiskStore, _ oracle: CrashOracle, onError: (CaskError) -> Void) throws {
        var rng = SeededBytes(seed: 500)
        for i in 0..<500 {
            let key = "k\(rng.next() % 40)"
            do {
                if i % 5 == 4 {
                    _ = try store.value(forKey: key)
                } else if rng.next() % 7 == 0 {
                    let op = oracle.begin(key, nil)
                    try store.removeValue(forKey: key)
                    oracle.acknowledge(op)
                } else {
                    let value = rng.compressible(Int(rng.next() % 700))
                    let op = oracle.begin(key, value)
                    try store.setValue(value, forKey: key)
                    oracle.acknowledge(op)
                }
                if i % 16 == 15 { try store.sync(); oracle.markDurable() }
                if i % 125 == 124 { try store.compact() }
            } catch let error as CaskError {
                onError(error)
            }
        }
    }

    /// ENOSPC, EIO and EFBIG (in turn) at every call index of every operation kind the workload
    /// makes, once and forever.
    @Test func faultsAtEveryCallIndexOfAFiveHundredOperationWorkload() throws {
        let kinds: [FaultyFileSystem.Operation] = [.append, .sync, .syncDirectory, .open, .truncate, .rename, .remove, .read, .size, .overwrite]
        // A dry run counts the calls of each kind the workload makes after open.
        let dry = FaultyFileSystem(wrapping: SimulatedFileSystem())
        let dryStore = try DiskStore(directory: "/s", options: simulatedOptions(dry, durability: .none, segmentSize: 4096))
        for kind in kinds { dry.inject(.init(operation: kind, at: Int.max)) }
        try Self.fiveHundredOperations(dryStore, CrashOracle()) { Issue.record("dry run failed: \($0)") }
        let calls = Dictionary(uniqueKeysWithValues: kinds.map { ($0, dry.calls($0)) })
        try dryStore.close()
        var runs = 0, faults = 0
        let errnos = [ENOSPC, EIO, EFBIG]
        for kind in kinds {
            for at in 1...max(1, calls[kind]!) {
                for forever in [false, true] {
                    let errno = errnos[(at + (forever ? 1 : 0)) % 3]
                    let base = SimulatedFileSystem()
                    let faulty = FaultyFileSystem(wrapping: base)
                    let store = try DiskStore(directory: "/s", options: simulatedOptions(faulty, durability: .none, segmentSize: 4096))
                    let oracle = CrashOracle()
                    faulty.inject(.init(operation: kind, at: at, errno: errno, forever: forever))
                    try Self.fiveHundredOperations(store, oracle) { error in
                        guard case .io(_, _, let code) = error, code == errno else {
                            Issue.record("\(kind) at \(at): unexpected \(error)")
                            return
                        }
                    }
                    runs += 1
                    faults += faulty.faultsInjected
                    faulty.clear()
                    #expect(try oracle.violations(in: store).isEmpty, "\(kind) \(errno) at \(at) forever \(forever)")
                    let op = oracle.begin("after", Data("ok".utf8))
                    try store.setValue(Data("ok".utf8), forKey: "after")
                    try store.sync()
                    oracle.acknowledge(op)
                    oracle.markDurable()
                    #expect(try store.value(forKey: "after") == Data("ok".utf8))
                    try store.close()
                    let reopened = try DiskStore(directory: "/s", options: simulatedOptions(base, durability: .none, segmentSize: 4096))
                    let problems = try oracle.violations(in: reopened)
                    #expect(problems.isEmpty, "\(kind) \(errno) at \(at) forever \(forever): after reopen: \(problems.prefix(3))")
                    try reopened.close()
                }
            }
        }
        let perKind = kinds.map { "\($0.rawValue) \(calls[$0]!)" }.joined(separator: ", ")
        print("I/O errors, 500-operation workload: \(runs) runs, \(faults) faults injected at every call index (\(perKind))")
        #expect(runs >= 2 * kinds.count)
    }

    @Test func shortWritesOfEveryLengthAreRetriedOrCutOff() throws {
        for length in 0..<120 {
            let base = SimulatedFileSystem()
            let faulty = FaultyFileSystem(wrapping: base)
            let store = try DiskStore(directory: "/s", options: simulatedOptions(faulty, durability: .everyWrite))
            try store.setValue(Data("first".utf8), forKey: "a")
            faulty.inject(.init(operation: .append, at: 1, shortWrite: length))
            if length == 0 {
                // A write that makes no progress is an error (EIO), not an endless retry.
                #expect(throws: CaskError.self) { try store.setValue(Data(repeating: 7, count: 100), forKey: "b") }
                #expect(try store.value(forKey: "b") == nil)
            }
            try store.setValue(Data(repeating: 7, count: 100), forKey: "b")   // a short write is completed by a retry
            #expect(try store.value(forKey: "b") == Data(repeating: 7, count: 100))
            try store.close()
            let reopened = try DiskStore(directory: "/s", options: simulatedOptions(base, durability: .none))
            #expect(try reopened.value(forKey: "a") == Data("first".utf8))
            #expect(try reopened.value(forKey: "b") == Data(repeating: 7, count: 100), "short write of \(length)")
        }
    }
}
