// The modules below `CaskLog` whose declarations every file of it uses: the support code
// (`Locked`, `WallClock`, crash points) and the memory layer's `EvictionCause` and
// `EvictionPolicy`, which the log's eviction reports and follows. Re-exported, as `Cask`
// re-exports them too (Sources/Cask/Exports.swift).
@_exported import CaskMemory
@_exported import CaskSupport
