import Foundation

/// Human-readable sizes and durations for tables; JSON output keeps raw numbers.
package enum Formatting {
    package static func bytes(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while abs(value) >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }

    package static func bytes(_ n: Int) -> String { bytes(Int64(n)) }

    package static func duration(_ seconds: Double) -> String {
        let s = abs(seconds)
        if s < 1 { return String(format: "%.0fms", s * 1000) }
        if s < 120 { return String(format: "%.0fs", s) }
        if s < 7200 { return String(format: "%.0fm", s / 60) }
        if s < 172_800 { return String(format: "%.0fh", s / 3600) }
        return String(format: "%.0fd", s / 86400)
    }

    package static func rate(_ count: Double, per seconds: Double) -> String {
        let r = count / max(seconds, 1e-9)
        if r >= 1_000_000 { return String(format: "%.2fM/s", r / 1_000_000) }
        if r >= 1000 { return String(format: "%.1fK/s", r / 1000) }
        return String(format: "%.0f/s", r)
    }

    /// Left-aligned columns separated by two spaces; numeric-looking columns right-aligned.
    package static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in
                let pad = String(repeating: " ", count: widths[i] - c.count)
                return i == 0 ? c + pad : pad + c
            }.joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }

    package static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A progress line on a terminal (rate and ETA, redrawn in place) or plain lines otherwise.
package final class Progress {
    private let label: String
    private let start = Date()
    private var lastDraw = Date.distantPast
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private var lastPlainPercent = -1

    package init(_ label: String) {
        self.label = label
    }

    /// Reports `done` of `total` units (bytes unless said otherwise).
    package func update(_ done: Int64, of total: Int64) {
        let total = max(total, 1)
        let now = Date()
        let elapsed = now.timeIntervalSince(start)
        let fraction = Double(done) / Double(total)
        if isTerminal {
            guard now.timeIntervalSince(lastDraw) > 0.1 || done >= total else { return }
            lastDraw = now
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let rate = Double(done) / max(elapsed, 1e-6)
            let eta = rate > 0 ? Double(total - done) / rate : 0
            let text = String(format: "\r%@ [%@] %3.0f%% %@/s ETA %@", label, bar, fraction * 100,
                              Formatting.bytes(Int64(rate)), Formatting.duration(eta))
            Console.err(text)
        } else {
            let percent = Int(fraction * 100) / 25 * 25
            if percent > lastPlainPercent {
                lastPlainPercent = percent
                printError("\(label): \(percent)%")
            }
        }
    }

    package func finish() {
        if isTerminal { Console.err("\n") }
    }
}
