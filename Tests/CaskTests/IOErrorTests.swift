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
