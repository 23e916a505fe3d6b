import Foundation

/// The churn results as Markdown tables: throughput and latency, then windows, disk and writes.
struct ChurnTable {
    let results: [ChurnResult]
    let date: String
    let machine: String

    func markdown() -> String {
        guard let first = results.first else { return "No results.\n" }
        var s = "Churn measured \(date) on \(machine): \(first.keys) keys filled, then \(first.puts) random overwrites, "
        s += "16-byte keys, \(first.valueBytes)-byte values, no sync, one thread, every put timed.\n\n"
        s += table(["engine", "puts/s", "p50", "p90", "p99", "p99.9", "p99.99", "max", "> 1 ms", "> 10 ms",
                    "machine stalls (puts > 10 ms in one)"], results.map(latencyRow))
        s += "\n"
        s += table(["engine", "slowest / median \(first.windowSummary.windowMilliseconds) ms window (puts)", "disk max / after close (MiB)",
                    "limit (MiB)", "write amp. (write_bytes)", "net of cancelled", "write amp. (wchar)", "write amp. (own count)", "peak RSS (MiB)"], results.map(diskRow))
        s += "\n"
        s += table(["engine", "close after the churn (ms)", "open of that store (ms)", "its close (ms)"], results.map { r in
            [r.engine, String(format: "%.1f", r.closeSeconds * 1000), String(format: "%.1f", r.reopenSeconds * 1000),
             String(format: "%.1f", r.secondCloseSeconds * 1000)]
        })
        return s
    }

    func latencyRow(_ r: ChurnResult) -> [String] {
        let l = r.latency
        return [r.engine, rate(r.putsPerSecond), time(l.p50), time(l.p90), time(l.p99), time(l.p999), time(l.p9999), time(l.max),
                "\(l.over1ms)", "\(l.over10ms)",
                r.machineStalls.map { "\($0.lateWakeUps) (\($0.slowPutsInStalls) of \($0.slowPuts))" } ?? "–"]
    }

    func diskRow(_ r: ChurnResult) -> [String] {
        let w = r.windowSummary
        let ratio = w.medianWindowPuts > 0 ? Double(w.slowestWindowPuts) / Double(w.medianWindowPuts) : 0
        return [r.engine, String(format: "%d / %d (%.2f)", w.slowestWindowPuts, w.medianWindowPuts, ratio),
                String(format: "%.0f / %.0f", mib(r.diskMaxBytes), mib(r.diskFinalBytes)),
                r.byteLimit.map { String(format: "%.0f", mib($0)) } ?? "–",
                String(format: "%.2f", r.writeAmplification),
                String(format: "%.2f", r.netWriteAmplification),
                String(format: "%.2f", r.syscallWriteAmplification),
                r.ownWriteAmplification.map { String(format: "%.2f", $0) } ?? "–",
                String(format: "%.0f", mib(r.peakResidentBytes))]
    }

    func table(_ header: [String], _ rows: [[String]]) -> String {
        var s = "| " + header.joined(separator: " | ") + " |\n|---|" + header.dropFirst().map { _ in "---:" }.joined(separator: "|") + "|\n"
        for row in rows { s += "| " + row.joined(separator: " | ") + " |\n" }
        return s
    }

    func mib(_ bytes: Int64) -> Double { Double(bytes) / 1_048_576 }

    func rate(_ x: Double) -> String {
        x >= 1e6 ? String(format: "%.2f M", x / 1e6) : x >= 1e3 ? String(format: "%.0f K", x / 1e3) : String(format: "%.0f", x)
    }

    /// Nanoseconds in the unit that suits them.
    func time(_ ns: UInt32) -> String {
        let x = Double(ns)
        if x >= 1e6 { return String(format: "%.1f ms", x / 1e6) }
        if x >= 1e3 { return String(format: "%.1f µs", x / 1e3) }
        return String(format: "%.0f ns", x)
    }
}
