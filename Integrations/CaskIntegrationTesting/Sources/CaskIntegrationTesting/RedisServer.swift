import Foundation

/// A `redis-server` of the test's own on 127.0.0.1 and a free port (below Linux's ephemeral
/// range, tried again on another when taken), with no persistence (a restart is a restart
/// empty), killed when the test ends.
public final class RedisServer: @unchecked Sendable {
    /// The port it listens on, on 127.0.0.1.
    public private(set) var port: Int
    private let folder: TestFolder
    private var process: Process?

    /// Starts a server.
    public init() throws {
        folder = TestFolder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        port = Int.random(in: 20_000...32_000)
        for attempt in 1...5 {
            do { try start(); return } catch where attempt < 5 {
                kill()
                port = Int.random(in: 20_000...32_000)
            }
        }
    }

    deinit { kill() }

    /// Starts the server and waits until it answers PING.
    public func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Self.executable("redis-server"))
        p.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder.path]
        p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        for _ in 0..<500 {
            if (try? cli("PING")) == "PONG" { return }
            if p.isRunning == false { break }
            usleep(20_000)
        }
        throw Unavailable(what: "redis-server did not start on port \(port)")
    }

    /// SIGKILL: gone at once, everything it held lost.
    public func kill() {
        guard let p = process else { return }
        Foundation.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// Runs `redis-cli` against the server; its output, trimmed.
    @discardableResult
    public func cli(_ arguments: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Self.executable("redis-cli"))
        p.arguments = ["-h", "127.0.0.1", "-p", "\(port)"] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The path of an installed program.
    static func executable(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        throw Unavailable(what: "\(name) is not installed (Debian: apt-get install redis-server)")
    }

    /// The server could not be started.
    public struct Unavailable: Error, CustomStringConvertible {
        public let what: String
        public var description: String { what }
    }
}
