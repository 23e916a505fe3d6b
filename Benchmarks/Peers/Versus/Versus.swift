import ArgumentParser
import Foundation
import PeerEngines

/// `cask-versus`: one workload definition run against Cask, LevelDB, RocksDB, LMDB, SQLite and a
/// bare append log, each engine in its own child process (so that peak memory is its own),
/// repeated `--runs` times; medians are written to `--out` as JSON and CSV.
@main
struct Versus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cask-versus",
        abstract: "Side-by-side benchmark of Cask against SQLite, LMDB, LevelDB, RocksDB and a bare append log.",
        subcommands: [Run.self, EngineCommand.self, Limits.self, Churn.self, ChurnEngine.self],
        defaultSubcommand: Run.self)
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run every engine (one child process each) and write the report.")

    @Option(help: "Keys in the fill phases (the other phases scale with it).") var count = 1_000_000
    @Option(help: "Runs per engine; medians are reported.") var runs = 3
    @Option(help: "Engines, comma-separated.") var engines = allEngines.map { $0.name }.joined(separator: ",")
    @Option(help: "Scratch directory for the stores.") var scratch = NSTemporaryDirectory()
    @Option(help: "Directory for results.json, phases.csv, overwrite-disk.csv.") var out = "results/peers"

    func run() throws {
        let me = CommandLine.arguments[0]
        var reports: [String: [EngineReport]] = [:]
        let names = engines.split(separator: ",").map(String.init)
        for name in names { guard engine(named: name) != nil else { throw ValidationError("unknown engine \(name)") } }
        for run in 1...runs {
            for name in names {
                FileHandle.standardError.write("== run \(run)/\(runs): \(name)\n".data(using: .utf8)!)
                let dir = (scratch as NSString).appendingPathComponent("cask-versus-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(atPath: dir) }
                let reportPath = dir + ".json"
                defer { try? FileManager.default.removeItem(atPath: reportPath) }
                try child(me, ["engine", name, "--count", "\(count)", "--scratch", dir, "--report", reportPath])
                let report = try JSONDecoder().decode(EngineReport.self, from: Data(contentsOf: URL(fileURLWithPath: reportPath)))
                reports[name, default: []].append(report)
            }
        }
        let limitsPath = (scratch as NSString).appendingPathComponent("cask-versus-limits-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(atPath: limitsPath) }
        try child(me, ["limits", "--scratch", scratch, "--report", limitsPath])
        let limits = try JSONDecoder().decode(PhysicalLimits.self, from: Data(contentsOf: URL(fileURLWithPath: limitsPath)))
        try Report(count: count, runs: runs, engines: names, reports: reports, limits: limits).write(to: out)
    }

    func child(_ executable: String, _ arguments: [String]) throws { try ChildProcess.run(executable, arguments) }
}

struct EngineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "engine", abstract: "Run the workload against one engine (a child of `run`).")
    @Argument var name: String
    @Option var count = 1_000_000
    @Option var scratch: String
    @Option var report: String
    @Option(help: "Run only these phases (overwrite; 4KiB: the 4 KiB fill and random gets; 100B: the 100-byte fill, open and gets), to measure them alone.") var only: String?

    func run() throws {
        guard let type = engine(named: name) else { throw ValidationError("unknown engine \(name)") }
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let runner = Runner(engine: type, scratch: scratch, count: count)
        switch only {
        case nil: try runner.run()
        case "overwrite": try runner.overwrite()
        case "4KiB": try runner.largeValues()
        case "100B": try runner.smallValues()
        case let other?: throw ValidationError("--only takes overwrite, 4KiB or 100B, not \(other)")
        }
        let r = EngineReport(engine: name, configuration: type.configurationNote, harnessResidentBytes: runner.harnessResidentBytes,
                             results: runner.results, samples: runner.samples)
        try JSONEncoder().encode(r).write(to: URL(fileURLWithPath: report))
    }
}

struct Limits: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Measure sequential disk speed and LZ4 speed (a child of `run`).")
    @Option var scratch: String
    @Option var report: String
    @Option var megabytes = 1024

    func run() throws {
        let dir = (scratch as NSString).appendingPathComponent("cask-versus-seq-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let limits = try PhysicalLimits.measure(scratch: dir, megabytes: megabytes)
        try JSONEncoder().encode(limits).write(to: URL(fileURLWithPath: report))
    }
}
