import ArgumentParser
import Cask
import Foundation

/// `cask-harness loader-hit`: what a get-or-load costs when the value is fresh in memory,
/// against a plain memory hit, in one run (issue 27's aim: within 1.2× of the plain hit).
/// Times `--iterations` calls of each, `--rounds` times, alternating, and prints the medians.
struct LoaderHit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loader-hit",
        abstract: "A get-or-load of a fresh value in memory against a plain memory hit, in one run.")

    @Option(help: "Scratch directory (a fresh folder inside it is used and removed).") var directory = NSTemporaryDirectory()
    @Option(help: "Calls per round of each kind.") var iterations = 1_000_000
    @Option(help: "Rounds (the median is reported).") var rounds = 5

    func run() async throws {
        let path = (directory as NSString).appendingPathComponent("cask-loader-hit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }   // harmless: a scratch folder
        let cache = try CaskCache(directory: path)
        let keys = (0..<1000).map { "user:\($0)" }
        let entry = CacheEntryOptions(timeToLive: .seconds(3600), staleWindow: .seconds(3600))
        for (i, key) in keys.enumerated() {
            _ = try await cache.value(forKey: key, as: Int.self, options: entry) { i }
        }
        // Timed in a detached task and nonisolated functions: from the main actor (where `run`
        // starts) every call of a nonisolated async function hops executors and back (1.3-1.6 µs).
        let (iterations, rounds) = (iterations, rounds)
        let (plainSync, plainAsync, loader) = try await Task.detached { () async throws -> ([Double], [Double], [Double]) in
            var plainSync: [Double] = [], plainAsync: [Double] = [], loader: [Double] = []
            for _ in 0..<rounds {
                plainSync.append(try Timing.time(iterations) { n in try cache.value(Int.self, forKey: keys[n % 1000]) ?? 0 })
                plainAsync.append(try await Timing.timeAsync(iterations) { n in try await cache.value(Int.self, forKey: keys[n % 1000]) ?? 0 })
                loader.append(try await Timing.timeAsync(iterations) { n in
                    try await cache.value(forKey: keys[n % 1000], as: Int.self, options: entry) { -1 }
                })
            }
            return (plainSync, plainAsync, loader)
        }.value
        let stats = cache.loadStatistics
        try await cache.close()
        let (s, a, l) = (Self.median(plainSync), Self.median(plainAsync), Self.median(loader))
        print(String(format: "memory hit, ns per call (median of %d rounds of %d): plain %.1f, plain async %.1f, loader %.1f; loader / plain %.2f, loader / plain async %.2f; loads during timing: %d",
                     rounds, iterations, s, a, l, l / s, l / a, stats.loads - 1000))
    }

    static func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
}

/// Timing loops outside the command type: a command conforming to `AsyncParsableCommand` is
/// main-actor isolated, and an isolated loop would hop executors around every async call.
enum Timing {
    static func time(_ n: Int, _ body: (Int) throws -> Int) rethrows -> Double {
        var sink = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<n { sink &+= try body(i) }
        let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n)
        if sink == .min { print("") }   // keeps the calls from being optimised away
        return ns
    }

    static func timeAsync(_ n: Int, _ body: (Int) async throws -> Int) async rethrows -> Double {
        var sink = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<n { sink &+= try await body(i) }
        let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n)
        if sink == .min { print("") }
        return ns
    }
}
