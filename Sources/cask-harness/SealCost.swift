import ArgumentParser
import Cask
import CaskToolSupport

/// `cask-harness seal-cost`: what sealing and opening one record costs with no I/O around it.
struct SealCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal-cost",
        abstract: "Nanoseconds per AES-256-GCM seal and open of one record (header, key and value), no I/O.")

    @Option(help: "Value sizes in bytes.") var sizes: [Int] = [100, 4096]
    @Option(help: "Records per run.") var count = 200_000
    @Option(help: "Runs; the median is reported.") var runs = 5

    func run() throws {
        for size in sizes {
            let cost = try withStoreErrors { try SealingCost.measure(valueSize: size, count: count, runs: runs) }
            print("seal-cost: \(size)-byte values: seal \(Int(cost.seal)) ns, open \(Int(cost.open)) ns per record (\(String(format: "%.2f", Double(size) / cost.seal)) GB/s sealing)")
        }
    }
}
