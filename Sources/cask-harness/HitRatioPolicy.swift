import ArgumentParser
import Cask

/// The eviction and admission policies `cask-harness hitratio --policy NAME` can open a store
/// with, by name, for the hit-ratio benchmark (Benchmarks/README.md, "Hit ratio").
let hitRatioPolicies = ["lru"]

/// Sets `options` up for the policy named `name`, leaving everything else as it is.
///
/// - `lru`: the store's exact least-recently-used eviction, as every store has it today:
///   nothing to change.
///
/// A frequency-aware policy (issue 43: a TinyLFU sketch in front of the LRU) gets its name here.
/// - Throws: `ValidationError` for a name not in ``hitRatioPolicies`` (exit status 64).
func applyPolicy(_ name: String, to options: inout StoreOptions) throws {
    switch name {
    case "lru":
        return
    default:
        throw ValidationError("--policy must be one of \(hitRatioPolicies.joined(separator: ", ")); got '\(name)'")
    }
}
