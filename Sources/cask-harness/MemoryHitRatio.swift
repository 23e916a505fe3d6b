import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

/// `cask-harness memory-hitratio TRACE`: replays a request trace cache-aside (get; on a miss,
/// set) against a `MemoryCache` whose cost limit counts each item's key and value bytes, as the
/// exact LRU of `Benchmarks/hitratio/peers.py` counts them, and prints one JSON line with the
/// hits. Under `--policy lru` it must match that exact LRU's hits; `--policy frequency` is the
/// memory cache's TinyLFU admission (LimitsAndEviction.md, "Policies").
struct MemoryHitRatio: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-hitratio",
        abstract: "Replay a key trace cache-aside against a MemoryCache with a cost limit; print the hits as JSON.")

    @Argument(help: "Trace file: raw little-endian uint32 key ids (Benchmarks/hitratio/traces.py); id i is the key k%08d.")
    var trace: String
    @Option(help: "Cost limit in key and value bytes.") var costLimit = 50_000_000
    @Option(help: "Value size in bytes.") var valueSize = 8192
    @Option(help: "lru or frequency.") var policy = "lru"
    @Option(help: "The trace's name in the output (default: the file's name without .u32).") var name: String?

    func validate() throws {
        try ArgumentValues.count(costLimit, option: "--cost-limit", minimum: 1)
        try ArgumentValues.count(valueSize, option: "--value-size", minimum: 1)
        guard ["lru", "frequency"].contains(policy) else { throw ValidationError("--policy must be lru or frequency; got '\(policy)'") }
    }

    func run() throws {
        let ids = try HitRatioTrace.read(trace)
        let traceName = name ?? HitRatioTrace.name(of: trace)
        let cache = MemoryCache<Data>(limits: .init(costLimit: costLimit, policy: policy == "frequency" ? .frequencyAware : .leastRecentlyUsed))
        let values = HitRatioTrace.values(size: valueSize)
        var hits = 0
        for (n, id) in ids.enumerated() {
            let key = HitRatioTrace.key(id)
            if cache.value(forKey: key) != nil {
                hits += 1
            } else {
                cache.setValue(values[n % values.count], forKey: key, cost: key.utf8.count + valueSize)
            }
        }
        let ratio = Double(hits) / Double(ids.count)
        print(#"{"trace":"\#(traceName)","cache":"memory-\#(policy)","requests":\#(ids.count),"hits":\#(hits),"hit_ratio":\#(ratio),"declined":\#(cache.admissionsDeclined),"items":\#(cache.count)}"#)
    }
}
