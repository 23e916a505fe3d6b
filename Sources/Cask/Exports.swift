// The modules below `Cask` whose public declarations are part of Cask's API: `import Cask`
// alone gives a consumer `StoreOptions`, `CaskError` and the other types the log takes and
// reports, `MemoryCache`, `EvictionCause` and `WallClock`. Their `package` declarations stay
// visible only to this package's modules.
@_exported import CaskLog
@_exported import CaskMemory
@_exported import CaskSupport
