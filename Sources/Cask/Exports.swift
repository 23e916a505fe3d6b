// The modules below `Cask` whose public declarations are part of Cask's API: `import Cask`
// alone gives a consumer `MemoryCache`, `EvictionCause` and `WallClock`. Their `package`
// declarations stay visible only to this package's modules.
@_exported import CaskMemory
@_exported import CaskSupport
