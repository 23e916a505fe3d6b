import ArgumentParser
import Foundation
import PeerEngines

/// `cask-versus churn`: sustained random overwrite, every put timed, each engine in its own
/// child process (`churn-engine`), one after another; the report goes to `--out`.
struct Churn: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fill --count keys, then --ops random overwrites (16-byte keys, 100-byte values, no sync, one thread), every put timed.")

    @Option(help: "Keys filled before the churn.") var count = 1_000_000
    @Option(help: "Random overwrites in the churn (every one timed).") var ops = 5_000_000
    @Option(help: "Engines, comma-separated, in report order.") var engines = churnEngines.map { $0.name }.joined(separator: ",")
    @Option(help: "cask-limit's byte limit, in bytes (96 MiB).") var byteLimit = CaskLimitEngine.defaultByteLimit
    @Option(help: "Width of a throughput window, in milliseconds.") var windowMs = 100
    @Option(help: "Scratch directory for the stores.") var scratch = NSTemporaryDirectory()
    @Option(help: "Directory for churn.json, churn-*.csv and churn-summary.md.") var out = "Benchmarks/results/churn"

    func validate() throws {
        guard count > 0, ops > 0, windowMs > 0 else { throw ValidationError("--count, --ops and --window-ms must be positive") }
        for name in names where churnEngine(named: name) == nil { throw ValidationError("unknown engine \(name)") }
    }

    var names: [String] { engines.split(separator: ",").map(String.init) }

    func run() throws {
        var results: [ChurnResult] = []
        for name in names {
            FileHandle.standardError.write(Data("== churn: \(name)\n".utf8))
            let dir = (scratch as NSString).appendingPathComponent("cask-churn-\(UUID().uuidString)")
            let reportPath = dir + ".json"
            defer {
                try? FileManager.default.removeItem(atPath: dir)
                try? FileManager.default.removeItem(atPath: reportPath)
            }
            try ChildProcess.run(CommandLine.arguments[0], [
                "churn-engine", name, "--count", "\(count)", "--ops", "\(ops)", "--byte-limit", "\(byteLimit)",
                "--window-ms", "\(windowMs)", "--scratch", dir, "--report", reportPath,
            ])
            results.append(try JSONDecoder().decode(ChurnResult.self, from: Data(contentsOf: URL(fileURLWithPath: reportPath))))
        }
        try ChurnReport(results: results).write(to: out)
    }
}

/// `cask-versus churn-engine NAME`: the churn against one engine (a child of `churn`).
struct ChurnEngine: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "churn-engine", abstract: "Run the churn against one engine (a child of `churn`).")
    @Argument var name: String
    @Option var count = 1_000_000
    @Option var ops = 5_000_000
    @Option var byteLimit = CaskLimitEngine.defaultByteLimit
    @Option var windowMs = 100
    @Option var scratch: String
    @Option var report: String

    func run() throws {
        guard let type = churnEngine(named: name) else { throw ValidationError("unknown engine \(name)") }
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let runner = ChurnRunner(engine: type, scratch: scratch, keys: count, puts: ops, byteLimit: byteLimit, windowMilliseconds: windowMs)
        let result = try runner.run()
        try JSONEncoder().encode(result).write(to: URL(fileURLWithPath: report))
    }
}
