import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness torture DIR --cycle C`: durable puts and removes, printing each acknowledgement, until
/// killed. The kill -9 test runs it, kills it at a random moment, and checks the store against
/// the acknowledgements. Hidden: a test tool, not a user command.
struct Torture: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Durable writes until killed (for crash tests).", shouldDisplay: false)

    @Argument var directory: String
    @Option var cycle = 0
    @Option var keys = 40
    @Option var operations = 1_000_000
    @Option var segmentSize = 16 << 10
    @Option var compactEvery = 0

    @Option(help: "Threads writing at once (each on its own keys).") var writers = 1

    /// The value written by operation `op` of `writer` in `cycle` (the checker recomputes it).
    static func value(cycle: Int, writer: Int, op: Int) -> Data {
        Data(String(repeating: "c\(cycle)w\(writer)o\(op);", count: 1 + (cycle + op) % 40).utf8)
    }

    func run() throws {
        var options = StoreOptions()
        options.durability = .everyWrite
        options.segmentSize = segmentSize
        options.compaction.checkInterval = .milliseconds(50)
        options.logger.logLevel = .critical
        let store = try withStoreErrors { try DiskStore(directory: directory, options: options) }
        print("READY", to: &standardError)
        let (cycle, keys, operations, compactEvery) = (self.cycle, self.keys, self.operations, self.compactEvery)
        // Lines are written with one write(2) each, so lines from different threads never mix.
        let work: @Sendable (Int) -> Void = { writer in
            var x = UInt64(cycle * 64 + writer + 1) &* 0x9E37_79B9_7F4A_7C15
            let out = FileHandle.standardOutput
            for op in 0..<operations {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                let key = "w\(writer)k\(x % UInt64(keys))"
                let remove = x % 5 == 0
                out.write(Data("BEGIN \(writer) \(op) \(key) \(remove ? "del" : "put")\n".utf8))
                do {
                    if remove { try store.removeValue(forKey: key) } else { try store.setValue(Self.value(cycle: cycle, writer: writer, op: op), forKey: key) }
                } catch {
                    FileHandle.standardError.write(Data("cask: \(error)\n".utf8))
                    Foundation.exit(3)
                }
                out.write(Data("ACK \(writer) \(op)\n".utf8))
                if writer == 0 && compactEvery > 0 && (op + 1) % compactEvery == 0 { _ = try? store.compact() }
            }
        }
        for writer in 1..<max(1, writers) { Thread { work(writer) }.start() }
        work(0)
    }
}

nonisolated(unsafe) var standardError = StandardError()
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) { FileHandle.standardError.write(Data(string.utf8)) }
}
