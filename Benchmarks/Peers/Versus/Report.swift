import Foundation

/// Medians over runs, written as results.json (everything), phases.csv (one row per engine
/// and phase), overwrite-disk.csv (disk use during the overwrite phase, first run) and
/// summary.md (the README's table).
struct Report {
    let count: Int
    let runs: Int
    let engines: [String]
    let reports: [String: [EngineReport]]
    let limits: PhysicalLimits

    struct Output: Codable {
        var date: String
        var machine: String
        var count: Int
        var runs: Int
        var configurations: [String: String]
        var harnessResidentBytes: [String: Int64]
        var limits: PhysicalLimits
        var phases: [PhaseResult]
    }

    static func median(_ xs: [Double]) -> Double { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }
    static func median(_ xs: [Int64]) -> Int64 { xs.isEmpty ? 0 : xs.sorted()[xs.count / 2] }

    /// The median of every figure of one phase across runs.
    func medianPhases(_ engine: String) -> [PhaseResult] {
        let runs = reports[engine] ?? []
        guard let first = runs.first else { return [] }
        return first.results.map { r in
            let all = runs.compactMap { run in run.results.first { $0.phase == r.phase } }
            var m = r
            m.seconds = Self.median(all.map(\.seconds))
            m.operationsPerSecond = Self.median(all.map(\.operationsPerSecond))
            m.megabytesPerSecond = Self.median(all.map(\.megabytesPerSecond))
            m.p50 = Self.median(all.map(\.p50))
            m.p99 = Self.median(all.map(\.p99))
            m.p999 = Self.median(all.map(\.p999))
            m.diskBytes = Self.median(all.map(\.diskBytes))
            m.storageWriteBytes = Self.median(all.map(\.storageWriteBytes))
            m.writeAmplification = r.writeAmplification == nil ? nil : Self.median(all.compactMap(\.writeAmplification))
            m.peakResidentBytes = Self.median(all.map(\.peakResidentBytes))
            return m
        }
    }

    static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30)
        return String(format: "%@, %d cores, %.0f GiB RAM, %@", cpu, cores, memory, ProcessInfo.processInfo.operatingSystemVersionString)
    }

    func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var phases: [PhaseResult] = []
        for e in engines { phases += medianPhases(e) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        let output = Output(
            date: formatter.string(from: Date()), machine: Self.machine(), count: count, runs: runs,
            configurations: Dictionary(uniqueKeysWithValues: engines.compactMap { e in reports[e]?.first.map { (e, $0.configuration) } }),
            harnessResidentBytes: Dictionary(uniqueKeysWithValues: engines.compactMap { e in reports[e]?.first.map { (e, $0.harnessResidentBytes) } }),
            limits: limits, phases: phases)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(output).write(to: URL(fileURLWithPath: directory + "/results.json"))

        var csv = "engine,phase,operations,seconds,ops_per_s,mb_per_s,p50_us,p99_us,p999_us,disk_bytes,storage_write_bytes,write_amplification,peak_rss_bytes\n"
        for p in phases {
            csv += "\(p.engine),\(p.phase),\(p.operations),\(p.seconds),\(p.operationsPerSecond),\(p.megabytesPerSecond),\(p.p50),\(p.p99),\(p.p999),\(p.diskBytes),\(p.storageWriteBytes),\(p.writeAmplification.map { String($0) } ?? ""),\(p.peakResidentBytes)\n"
        }
        try csv.write(toFile: directory + "/phases.csv", atomically: true, encoding: .utf8)

        var disk = "engine,bytes_put,disk_bytes\n"
        for e in engines { for s in reports[e]?.first?.samples ?? [] { disk += "\(s.engine),\(s.bytesPut),\(s.diskBytes)\n" } }
        try disk.write(toFile: directory + "/overwrite-disk.csv", atomically: true, encoding: .utf8)

        let summary = markdown(phases, output)
        try summary.write(toFile: directory + "/summary.md", atomically: true, encoding: .utf8)
        print(summary)
    }

    /// Operations per second per phase and engine, with the peer/Cask ratio, then latencies,
    /// disk, memory and the machine's limits.
    func markdown(_ phases: [PhaseResult], _ o: Output) -> String {
        func cell(_ e: String, _ phase: String) -> PhaseResult? { phases.first { $0.engine == e && $0.phase == phase } }
        let order = phases.filter { $0.engine == engines[0] }.map(\.phase)
        func rate(_ x: Double) -> String {
            x >= 1e6 ? String(format: "%.2f M", x / 1e6) : x >= 1e3 ? String(format: "%.0f K", x / 1e3) : String(format: "%.0f", x)
        }
        var s = "Measured \(o.date) on \(o.machine); \(count) keys; median of \(runs) runs.\n\n"
        s += "| operations per second | " + engines.joined(separator: " | ") + " |\n|---|" + engines.map { _ in "---:" }.joined(separator: "|") + "|\n"
        for phase in order where phase != "open" {
            s += "| \(phase) | " + engines.map { e in cell(e, phase).map { rate($0.operationsPerSecond) } ?? "–" }.joined(separator: " | ") + " |\n"
        }
        s += "| open of the filled store (ms) | " + engines.map { e in cell(e, "open").map { String(format: "%.1f", $0.seconds * 1000) } ?? "–" }.joined(separator: " | ") + " |\n"
        s += "\n| p50 / p99 / p999 µs | " + engines.joined(separator: " | ") + " |\n|---|" + engines.map { _ in "---:" }.joined(separator: "|") + "|\n"
        for phase in order where phase != "open" {
            s += "| \(phase) | " + engines.map { e in cell(e, phase).map { String(format: "%.1f / %.1f / %.0f", $0.p50, $0.p99, $0.p999) } ?? "–" }.joined(separator: " | ") + " |\n"
        }
        s += "\n| disk and memory | " + engines.joined(separator: " | ") + " |\n|---|" + engines.map { _ in "---:" }.joined(separator: "|") + "|\n"
        for phase in ["fillrandom-100B", "delete", "fillrandom-4KiB", "overwrite"] {
            s += "| disk after \(phase) (MiB) | " + engines.map { e in cell(e, phase).map { String(format: "%.0f", Double($0.diskBytes) / 1048576) } ?? "–" }.joined(separator: " | ") + " |\n"
        }
        s += "| write amplification, overwrite | " + engines.map { e in cell(e, "overwrite")?.writeAmplification.map { String(format: "%.2f", $0) } ?? "–" }.joined(separator: " | ") + " |\n"
        s += "| peak memory (MiB; harness alone \(String(format: "%.0f", Double(o.harnessResidentBytes[engines[0]] ?? 0) / 1048576))) | " + engines.map { e in
            let peak = phases.filter { $0.engine == e }.map(\.peakResidentBytes).max() ?? 0
            return String(format: "%.0f", Double(peak) / 1048576)
        }.joined(separator: " | ") + " |\n"
        let l = o.limits
        s += String(format: "\nMachine limits in the same run: sequential write %.0f MB/s (with fdatasync), read %.0f MB/s (page cache dropped), %.0f MB/s (cached); LZ4 on the workload's values: 100 B %.0f MB/s compress / %.0f MB/s decompress, 4 KiB %.0f / %.0f MB/s at ratio %.2f.\n",
                        l.sequentialWriteMBps, l.sequentialReadMBps, l.cachedReadMBps, l.lz4Compress100BMBps, l.lz4Decompress100BMBps,
                        l.lz4Compress4KiBMBps, l.lz4Decompress4KiBMBps, l.lz4Ratio4KiB)
        return s
    }
}
