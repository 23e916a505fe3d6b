import Foundation

/// Human-readable sizes and durations for tables; JSON output keeps raw numbers.
package enum Formatting {
    /// `512 B`, `1.5 KiB`, `64.0 MiB` (one decimal, binary units). Allocation-light: `ls` calls
    /// it twice per item.
    package static func bytes(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while abs(value) >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(n) B" : "\(decimal(value, places: 1)) \(units[unit])"
    }

    /// `value` rounded to `places` decimals (0 ... 3), without Foundation's formatter.
    package static func decimal(_ value: Double, places: Int) -> String {
        let scale = [1, 10, 100, 1000][min(max(places, 0), 3)]
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard scale > 1 else { return sign + String(scaled) }
        let fraction = String(scaled % Int64(scale))
        return sign + String(scaled / Int64(scale)) + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    package static func bytes(_ n: Int) -> String { bytes(Int64(n)) }

    /// "1 problem", "2 problems": `n` and `noun`, with an s unless `n` is 1.
    package static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    package static func duration(_ seconds: Double) -> String {
        let s = abs(seconds)
        if s < 1 { return decimal(s * 1000, places: 0) + "ms" }
        if s < 120 { return decimal(s, places: 0) + "s" }
        if s < 7200 { return decimal(s / 60, places: 0) + "m" }
        if s < 172_800 { return decimal(s / 3600, places: 0) + "h" }
        return decimal(s / 86400, places: 0) + "d"
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
