import ArgumentParser
import Cask

/// The eviction and admission policies `cask-harness hitratio --policy NAME` can open a store
/// with, by name, for the hit-ratio benchmark (Benchmarks/README.md, "Hit ratio").
let hitRatioPolicies = ["lru", "frequency"]

/// Sets `options` up for the policy named `name`, leaving everything else as it is.
///
/// - `lru`: ``EvictionPolicy/leastRecentlyUsed``, the default.
/// - `frequency`: ``EvictionPolicy/frequencyAware`` (TinyLFU admission in front of the LRU).
/// - Throws: `ValidationError` for a name not in ``hitRatioPolicies`` (exit status 64).
func applyPolicy(_ name: String, to options: inout StoreOptions) throws {
    switch name {
    case "lru":
        options.limits.policy = .leastRecentlyUsed
    case "frequency":
        options.limits.policy = .frequencyAware
    default:
        throw ValidationError("--policy must be one of \(hitRatioPolicies.joined(separator: ", ")); got '\(name)'")
    }
}
