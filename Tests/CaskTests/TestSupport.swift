import Foundation
import Synchronization
@testable import Cask

/// A fresh directory under the system's temporary folder, removed when the value is released.
final class TemporaryDirectory: Sendable {
    let path: String

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "cask-tests/\(safe)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let now = Atomic<Int64>(1_800_000_000_000)
    var milliseconds: Int64 { now.load(ordering: .relaxed) }
    func advance(_ d: Duration) { now.add(d.milliseconds, ordering: .relaxed) }
    var wallClock: WallClock { WallClock { [self] in milliseconds } }
}

extension Duration {
    var milliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }
}

/// Deterministic bytes (SplitMix64), so that failures reproduce.
struct SeededBytes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Random bytes (incompressible).
    mutating func random(_ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count { bytes[i] = UInt8(truncatingIfNeeded: next()) }
        return Data(bytes)
    }
    /// Text-like bytes that LZ4 compresses about 2x.
    mutating func compressible(_ count: Int) -> Data {
        let words = ["cache", "value", "swift", "record", "segment", "index", " ", "\n", "0123"]
        var d = Data()
        while d.count < count { d.append(contentsOf: words[Int(next() % UInt64(words.count))].utf8) }
        return d.prefix(count)
    }
}

/// Options for tests: automatic compaction off unless asked for, so that file layouts are predictable.
func options(segmentSize: Int = 64 << 20, durability: Durability = .none, clock: WallClock = .system, compacting: Bool = false) -> StoreOptions {
    var o = StoreOptions()
    o.segmentSize = segmentSize
    o.durability = durability
    o.clock = clock
    o.compaction.isAutomatic = compacting
    o.logger.logLevel = .critical   // recovery tests damage stores on purpose; keep CI logs short
    return o
}

/// Runs a shell script; returns its exit status and combined output.
func runShell(_ script: String) throws -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", script]
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    try p.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, text)
}

/// Whether a shell script succeeds here (for tests that need a capability the machine may lack).
func shellSucceeds(_ script: String) -> Bool {
    (try? runShell(script))?.0 == 0
}
