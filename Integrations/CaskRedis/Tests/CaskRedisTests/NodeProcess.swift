import Foundation

/// A `cask-redis-node` process (built with the tests): one command line in, one answer line
/// out, on a queue of its own so that no thread of Swift's pool blocks on the pipe.
final class NodeProcess: @unchecked Sendable {
    let directory: String
    let port: Int
    let id: UInt32
    private var process: Process?
    private var input: FileHandle?
    private var output: Int32 = -1
    private var pending: [UInt8] = []
    private let queue = DispatchQueue(label: "node")
    /// Whether the next ``start()`` runs the node under libfiu (`fiu-run -x`), so that
    /// ``inject(_:)`` can make its calls fail.
    var underFiu = false

    init(directory: String, port: Int, id: UInt32) throws {
        self.directory = directory
        self.port = port
        self.id = id
        try start()
    }

    deinit { kill() }

    static var executable: String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/cask-redis-node").path
    }

    func start() throws {
        let p = Process()
        signal(SIGPIPE, SIG_IGN)   // a node that died answers "error the node exited"
        if underFiu {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/fiu-run")
            p.arguments = ["-x", Self.executable, directory, "\(port)", "\(id)"]
            p.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        } else {
            p.executableURL = URL(fileURLWithPath: Self.executable)
            p.arguments = [directory, "\(port)", "\(id)"]
        }
        let inPipe = Pipe(), outPipe = Pipe()
        p.standardInput = inPipe
        p.standardOutput = outPipe
        try p.run()
        process = p
        input = inPipe.fileHandleForWriting
        output = outPipe.fileHandleForReading.fileDescriptor
        pending = []
    }

    /// Runs libfiu `commands` in the running node (`fiu-ctrl -c`; it must run ``underFiu``).
    func inject(_ commands: [String]) throws {
        guard let pid = process?.processIdentifier else { return }
        let ctrl = Process()
        ctrl.executableURL = URL(fileURLWithPath: "/usr/bin/fiu-ctrl")
        ctrl.arguments = commands.flatMap { ["-c", $0] } + ["\(pid)"]
        try ctrl.run()
        ctrl.waitUntilExit()
        guard ctrl.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
    }

    /// SIGKILL, and waits for the end.
    func kill() {
        guard let p = process else { return }
        Foundation.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// Sends one command; its answer line.
    func send(_ command: String) async -> String {
        await withCheckedContinuation { c in
            queue.async { c.resume(returning: self.exchange(command)) }
        }
    }

    private func exchange(_ command: String) -> String {
        guard let input else { return "error not running" }
        do { try input.write(contentsOf: Data((command + "\n").utf8)) } catch { return "error the node exited" }
        while true {
            if let nl = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = read(output, &buffer, buffer.count)
            if n <= 0 { return "error the node exited" }
            pending += buffer[..<n]
        }
    }

    /// Waits until the node follows the tier and has sent everything it queued.
    func settled(within seconds: Double = 15) async -> Bool {
        await eventually(seconds) {
            let s = await send("stats")
            return s.contains("following=true") && s.contains("waiting=0")
        }
    }
}
