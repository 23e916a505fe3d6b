import Foundation
import Testing
@testable import Cask

/// A real child process does durable puts and removes and is SIGKILLed at random moments; every
/// acknowledged operation must survive and nothing else may appear.
/// The value `cask-harness torture` writes for operation `op` of `writer` in `cycle` (Sources/cask-harness/Torture.swift).
func tortureValue(cycle: Int, writer: Int, op: Int) -> Data {
    Data(String(repeating: "c\(cycle)w\(writer)o\(op);", count: 1 + (cycle + op) % 40).utf8)
}

/// Runs `cask-harness torture` for one cycle, killed after `micros` or when it kills itself at a crash
/// point; updates `model` from its acknowledgements and checks the store against it.
func tortureCycle(_ cask: String, _ dir: String, cycle: Int, micros: UInt32, environment: [String: String] = [:],
                  extra: [String] = [], model: inout [String: Data?], violations: inout [String], diedAtPoint: inout Int) throws -> Int {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: cask)
    process.arguments = ["torture", dir, "--cycle", String(cycle)] + extra
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    var waited: UInt32 = 0
    while process.isRunning && waited < micros { usleep(1000); waited += 1000 }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) } else { diedAtPoint += 1 }
    process.waitUntilExit()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    // Each writer has at most one operation in flight; writers use disjoint keys.
    var inFlightByWriter: [Int: (key: String, value: Data?)] = [:]
    var acknowledged = 0
    for line in text.split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.first == "BEGIN", parts.count == 5, let writer = Int(parts[1]), let op = Int(parts[2]) {
            inFlightByWriter[writer] = (String(parts[3]), parts[4] == "del" ? nil : tortureValue(cycle: cycle, writer: writer, op: op))
        } else if parts.first == "ACK", parts.count == 3, let writer = Int(parts[1]), let done = inFlightByWriter[writer] {
            model[done.key] = .some(done.value)
            inFlightByWriter[writer] = nil
            acknowledged += 1
        }
    }
    let inFlight = Dictionary(uniqueKeysWithValues: inFlightByWriter.values.map { ($0.key, $0.value) })
    let store = try DiskStore(directory: dir, options: options(segmentSize: 16 << 10))
    for (key, expected) in model {
        let found = try store.value(forKey: key)
        let allowedInFlight = inFlight[key].map { $0 == found } ?? false
        if found != expected && !allowedInFlight {
            violations.append("cycle \(cycle): \(key) holds \(found?.count ?? -1) bytes, expected \(expected?.count ?? -1)")
        }
    }
    for (key, value) in inFlight {
        let found = try store.value(forKey: key)
        if found == value { model[key] = .some(found) }   // the in-flight operation reached the disk
    }
    for key in store.keys() where model[key] == nil { violations.append("cycle \(cycle): \(key) never written") }
    // The open queues the hint files the killed writer had not written; their temporary files
    // are this process's own until the hint queue is done.
    store.waitForBackgroundWork()
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }
    if !leftovers.isEmpty { violations.append("cycle \(cycle): leftovers \(leftovers)") }
    let pointsIntoMissingFiles = store.state.withLock { s in s.index.entries.contains { s.segments[$0.segment] == nil } }
    if pointsIntoMissingFiles { violations.append("cycle \(cycle): index entries into deleted files") }
    try store.close()
    return acknowledged
}

@Suite struct KillTests {
    @Test(arguments: CrashPoint.allCases)
    func dyingAtANamedCrashPointRecovers(point: CrashPoint) throws {
        guard let cask = harnessExecutable() else { Issue.record("cask-harness executable not built"); return }
        let dir = TemporaryDirectory()
        var model: [String: Data?] = [:], violations: [String] = []
        var acknowledged = 0, died = 0
        // Cycle 0 fills several segments; cycles 1... die at the crash point (or are killed).
        acknowledged += try tortureCycle(cask, dir.path, cycle: 0, micros: 150_000, model: &model, violations: &violations, diedAtPoint: &died)
        died = 0
        for cycle in 1...4 {
            acknowledged += try tortureCycle(cask, dir.path, cycle: cycle, micros: 3_000_000, environment: ["CASK_CRASH_AT": point.rawValue],
                                             extra: ["--compact-every", "40", "--segment-size", "4096", "--writers", "3"],
                                             model: &model, violations: &violations, diedAtPoint: &died)
        }
        #expect(acknowledged > 40)
        #expect(died >= 1, "\(point) was never reached")
        #expect(violations.isEmpty, "\(point): \(violations.prefix(5))")
    }

    @Test func killNineAtRandomMomentsLosesNoAcknowledgedWrite() throws {
        guard let cask = harnessExecutable() else { Issue.record("cask-harness executable not built"); return }
        let dir = TemporaryDirectory()
        let cycles = longTier ? 10_000 : 300
        var model: [String: Data?] = [:], violations: [String] = []
        var rng = SeededBytes(seed: 77)
        var acknowledged = 0, died = 0
        for cycle in 0..<cycles {
            acknowledged += try tortureCycle(cask, dir.path, cycle: cycle, micros: UInt32(2_000 + rng.next() % 40_000),
                                             model: &model, violations: &violations, diedAtPoint: &died)
        }
        print("kill -9: \(cycles) cycles, \(acknowledged) acknowledged operations, \(violations.count) violations")
        #expect(acknowledged > cycles)
        #expect(violations.isEmpty, "\(violations.prefix(10))")
    }
}
