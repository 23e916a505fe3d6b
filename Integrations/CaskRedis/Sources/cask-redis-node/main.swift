// One node of a test cluster: a CaskCache on a RedisSharedTier, driven one command per line on
// stdin, answering one line per command on stdout. The multi-process tests and the soak start
// several and kill them with SIGKILL.
//
// usage: cask-redis-node DIRECTORY PORT NODE-ID [KEY-PREFIX]
// commands: set K V [TTL-MS] | get K | local K | del K | prefix P | tag T | load K TAG V |
//           slowload K MS V (a get-or-load whose loader takes MS ms) | stats | quit
// answers:  ok | value V | nil | true | false | error MESSAGE | a line of key=value pairs
import Cask
import CaskRedis
import Foundation

let args = CommandLine.arguments
guard args.count >= 4, let port = Int(args[2]), let id = UInt32(args[3]) else {
    FileHandle.standardError.write(Data("usage: cask-redis-node DIRECTORY PORT NODE-ID [KEY-PREFIX]\n".utf8))
    exit(2)
}
var configuration = RedisConfiguration(host: "127.0.0.1", port: port)
configuration.commandTimeout = .milliseconds(500)
if args.count > 4 { configuration.keyPrefix = args[4] }
let tier = RedisSharedTier(configuration)
var options = CacheOptions()
options.sharedTier = tier
options.sharedTierNode = id
options.sharedTierTimeout = .milliseconds(300)
options.sharedTierRetryDelay = .milliseconds(50)
options.sharedTierLoadLease = .seconds(1)   // one load per key across the nodes
options.disk.durability = .everyWrite   // the outbox too: a kill -9 loses no queued change
let cache: CaskCache
do { cache = try CaskCache(directory: args[1], options: options) } catch {
    answer("error \(error)")
    exit(1)
}

/// Runs one command line; the answer.
func run(_ line: String) async -> String {
    let w = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    guard let verb = w.first else { return "error empty command" }
    do {
        switch (verb, w.count) {
        case ("set", 3), ("set", 4):
            try await cache.setValue(w[2], forKey: w[1], timeToLive: w.count == 4 ? Int(w[3]).map { .milliseconds($0) } : nil)
            return "ok"
        case ("get", 2): return try await cache.value(String.self, forKey: w[1]).map { "value \($0)" } ?? "nil"
        case ("local", 2): return cache.contains(w[1]) ? "true" : "false"
        case ("del", 2): try await cache.removeValue(forKey: w[1]); return "ok"
        case ("prefix", 2): try await cache.removeValues(withPrefix: w[1]); return "ok"
        case ("tag", 2): try await cache.removeValues(taggedWith: w[1]); return "ok"
        case ("load", 4):
            let v = try await cache.value(forKey: w[1], as: String.self, options: CacheEntryOptions(timeToLive: .seconds(600), tags: [w[2]])) { w[3] }
            return "value \(v)"
        case ("slowload", 4):
            let ms = Int(w[2]) ?? 0
            let v = try await cache.value(forKey: w[1], as: String.self, options: CacheEntryOptions(timeToLive: .seconds(600))) {
                try await Task.sleep(for: .milliseconds(ms))
                return w[3]
            }
            return "value \(v)"
        case ("stats", 1):
            guard let s = cache.sharedTierStatistics else { return "error no shared tier" }
            return "following=\(s.isFollowing) waiting=\(s.changesWaiting) sent=\(s.changesSent) failures=\(s.failures) notices=\(s.noticesApplied) fromOthers=\(s.loadsFromOtherNodes)"
        case ("quit", 1):
            try await cache.close()
            tier.close()
            exit(0)
        default: return "error unknown command: \(line)"
        }
    } catch {
        return "error \(error)"
    }
}

/// Writes one answer line, unbuffered.
func answer(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

while let line = readLine() { answer(await run(line)) }
try? await cache.close()
tier.close()
