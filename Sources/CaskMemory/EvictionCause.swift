/// Why an item left a cache layer without being removed by the caller. One type for both layers:
/// ``MemoryCache`` evicts for `count`, `cost`, `age` and `memoryPressure`; ``DiskStore`` for
/// `size`, `count`, `age`, `timeToLive` and `damage`.
public enum EvictionCause: String, Sendable, Equatable, Codable {
    /// The disk store's byte limit (least recently used first).
    case size
    /// The memory cache's cost limit (least recently used first).
    case cost
    /// The count limit (least recently used first).
    case count
    /// The age limit: not read or written for longer than it allows.
    case age
    /// Its time to live ran out.
    case timeToLive
    /// A record failed its checksum.
    case damage
    /// The memory cache was emptied because the system asked for memory back.
    case memoryPressure
}
