import Foundation

/// Runs this executable again as a child process (one engine per process, so that its memory,
/// its storage writes and its threads are its own).
enum ChildProcess {
    /// Runs `executable` with `arguments` and waits; throws when it fails.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw PeerBenchError("\(arguments.prefix(2).joined(separator: " ")) failed with status \(p.terminationStatus)")
        }
    }
}
