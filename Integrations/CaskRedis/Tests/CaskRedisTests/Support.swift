import Foundation
import Testing
import Cask
@testable import CaskRedis

/// A temporary folder, removed when the test ends.
final class Folder: Sendable {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "cask-redis-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A `redis-server` of the test's own on 127.0.0.1 and a free port (below Linux's ephemeral
/// range, tried again on another when taken), with no persistence (a restart is a restart
/// empty), killed when the test ends.
final class RedisServer: @unchecked Sendable {
    private(set) var port: Int
    let folder: Folder
    private var process: Process?

    init() throws {
        folder = try Folder()
        port = Int.random(in: 20_000...32_000)
        for attempt in 1...5 {
            do { try start(); return } catch where attempt < 5 {
                kill()
                port = Int.random(in: 20_000...32_000)
            }
        }
    }

    deinit { kill() }

    var configuration: RedisConfiguration {
        var c = RedisConfiguration(host: "127.0.0.1", port: port)
        c.commandTimeout = .milliseconds(500)
        return c
    }

    /// Starts the server and waits until it answers PING.
    func start() throws {
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
        throw RedisClientError.unavailable("redis-server did not start on port \(port)")
    }

    /// SIGKILL: gone at once, everything it held lost.
    func kill() {
        guard let p = process else { return }
        Foundation.kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    /// Runs `redis-cli` against the server; its output, trimmed.
    @discardableResult
    func cli(_ arguments: String...) throws -> String {
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

    static func executable(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
            return dir + "/" + name
        }
        throw RedisClientError.unavailable("\(name) is not installed (Debian: apt-get install redis-server)")
    }
}

/// Polls `condition` without blocking a thread of Swift's pool; whether it held in time.
func eventually(_ seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// A cache node on `server`, in its own folder.
func node(_ folder: Folder, _ name: String, _ tier: RedisSharedTier, id: UInt32) throws -> CaskCache {
    var o = CacheOptions()
    o.sharedTier = tier
    o.sharedTierNode = id
    o.sharedTierTimeout = .milliseconds(300)
    o.sharedTierRetryDelay = .milliseconds(50)
    return try CaskCache(directory: folder.file(name), options: o)
}

/// Waits until `cache` follows the tier live (it then reads through it).
func waitLive(_ cache: CaskCache) async -> Bool {
    await eventually(10) { cache.sharedTierStatistics?.isFollowing == true }
}
