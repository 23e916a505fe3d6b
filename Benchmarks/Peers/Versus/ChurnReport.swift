import Foundation

/// Writes the churn results: churn.json (everything), churn-summary.csv (one row per engine),
/// churn-throughput.csv (puts per window over time), churn-latency.csv (the latency
/// distribution), churn-disk.csv (disk use and storage writes over time) and churn-summary.md
/// (printed too).
struct ChurnReport {
    let results: [ChurnResult]

    struct Output: Codable {
        var date: String
        var machine: String
        var results: [ChurnResult]
    }

    func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        let output = Output(date: formatter.string(from: Date()), machine: Report.machine(), results: results)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(output).write(to: URL(fileURLWithPath: directory + "/churn.json"))
        try save(summaryCSV(), directory, "churn-summary.csv")
        try save(throughputCSV(), directory, "churn-throughput.csv")
        try save(latencyCSV(), directory, "churn-latency.csv")
        try save(diskCSV(), directory, "churn-disk.csv")
        let markdown = ChurnTable(results: results, date: output.date, machine: output.machine).markdown()
        try save(markdown, directory, "churn-summary.md")
        print(markdown)
    }

    private func save(_ text: String, _ directory: String, _ name: String) throws {
        try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    }

    static let summaryHeader = [
        "engine", "keys", "puts", "fill_s", "churn_s", "close_s", "puts_per_s",
        "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns", "puts_over_1ms", "puts_over_10ms",
        "window_ms", "slowest_window_puts", "median_window_puts",
        "byte_limit", "disk_max_bytes", "disk_after_close_bytes",
        "user_bytes", "write_bytes", "cancelled_write_bytes", "write_amplification", "net_write_amplification",
        "syscall_write_bytes", "syscall_write_amplification",
        "own_bytes_written", "own_compaction_bytes_written", "own_write_amplification", "peak_rss_bytes",
        "reopen_s", "second_close_s",
    ].joined(separator: ",")

    func summaryCSV() -> String {
        var csv = Self.summaryHeader + "\n"
        for r in results {
            let l = r.latency, w = r.windowSummary
            let fields: [String] = [
                r.engine, "\(r.keys)", "\(r.puts)", "\(r.fillSeconds)", "\(r.seconds)", "\(r.closeSeconds)", "\(r.putsPerSecond)",
                "\(l.p50)", "\(l.p90)", "\(l.p99)", "\(l.p999)", "\(l.p9999)", "\(l.max)", "\(l.over1ms)", "\(l.over10ms)",
                "\(w.windowMilliseconds)", "\(w.slowestWindowPuts)", "\(w.medianWindowPuts)",
                optional(r.byteLimit), "\(r.diskMaxBytes)", "\(r.diskFinalBytes)",
                "\(r.userBytes)", "\(r.storageWriteBytes)", "\(r.cancelledWriteBytes)", "\(r.writeAmplification)", "\(r.netWriteAmplification)",
                "\(r.syscallWriteBytes)", "\(r.syscallWriteAmplification)",
                optional(r.ownBytesWritten), optional(r.ownCompactionBytesWritten), optional(r.ownWriteAmplification),
                "\(r.peakResidentBytes)", "\(r.reopenSeconds)", "\(r.secondCloseSeconds)",
            ]
            csv += fields.joined(separator: ",") + "\n"
        }
        return csv
    }

    private func optional<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "" }

    func throughputCSV() -> String {
        var csv = "engine,t_seconds,puts\n"
        for r in results {
            let width = Double(r.windowSummary.windowMilliseconds) / 1000
            for (i, puts) in r.windows.enumerated() {
                csv += "\(r.engine),\(String(format: "%.3f", Double(i + 1) * width)),\(puts)\n"
            }
        }
        return csv
    }

    func latencyCSV() -> String {
        var csv = "engine,percentile,latency_ns\n"
        for r in results {
            for p in r.curve { csv += "\(r.engine),\(p.percentile),\(p.nanoseconds)\n" }
        }
        return csv
    }

    func diskCSV() -> String {
        var csv = "engine,t_seconds,disk_bytes,write_bytes\n"
        for r in results {
            for s in r.diskSamples { csv += "\(r.engine),\(String(format: "%.3f", s.seconds)),\(s.diskBytes),\(s.writeBytes)\n" }
        }
        return csv
    }
}
