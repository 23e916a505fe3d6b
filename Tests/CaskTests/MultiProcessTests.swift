import Foundation
import Testing
@testable import Cask

/// One writer process and three reader processes on one store for 60 s (issue 14): the writer
/// puts, removes, rolls over and compacts, logging each operation before it makes it and each
/// sync after it returns; the readers open the store read-only, refresh it over and over, and
/// check every value against the log (Sources/cask-harness/Soak.swift). `cask verify` runs beside
/// them too. Any value a reader should not see fails the test.
@Suite struct MultiProcessTests {
    @Test func oneWriterAndThreeRefreshingReadersFor60Seconds() throws {
        guard let harness = harnessExecutable(), let cask = caskExecutable() else {
            Issue.record("cask-harness or cask not built"); return
        }
        let dir = TemporaryDirectory()
        let store = dir.file("store"), log = dir.file("log")
        func start(_ arguments: [String]) throws -> (Process, Pipe) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: harness)
            p.arguments = arguments
            let out = Pipe()
            p.standardOutput = out
            p.standardError = out
            try p.run()
            return (p, out)
        }
        let writer = try start(["soak-writer", store, log, "--seconds", "60"])
        let readers = try (0..<3).map { _ in try start(["soak-reader", store, log, "--seconds", "57"]) }
        var verifies: [Int32] = []
        for _ in 0..<3 {
            Thread.sleep(forTimeInterval: 12)
            verifies.append(try runShell("\(cask) verify \(store) > /dev/null 2>&1").0)
        }
        var outputs: [String] = []
        for (process, pipe) in [writer] + readers {
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            outputs.append(text)
            #expect(process.terminationStatus == 0, "\(text.suffix(2000))")
        }
        print("multi-process soak: " + outputs.map { $0.split(separator: "\n").last.map(String.init) ?? "" }.joined(separator: "; ")
              + "; cask verify beside them: statuses \(verifies)")
        #expect(outputs[0].contains("writer: ") && outputs[0].contains("compactions"))
        for reader in outputs.dropFirst() { #expect(reader.contains(" 0 wrong") && !reader.contains(" 0 refreshes")) }
        #expect(verifies.allSatisfy { $0 == 0 })
    }
}
