import Logging
import CaskFormat

/// When the store makes written records durable (safe from power loss).
///
/// What survives which crash, for each mode, is spelled out in the Durability and Recovery article (Cask.docc/DurabilityAndRecovery.md).
public enum Durability: Sendable, Equatable {
    /// Records are handed to the OS when the write buffer fills, at least every `flushInterval`,
    /// and on ``DiskStore/sync()`` / ``DiskStore/close()``; the OS decides when they reach the disk.
    case none
    /// Every put and remove returns only after its record has been written and `fdatasync`ed.
    case everyWrite
    /// Like `.none`, plus a background thread `fdatasync`s the active segment at most once per
    /// interval `d`, and only while it holds unsynced records: a record is durable at most `d`
    /// after its put returns (plus the sync's own time). Rollover, ``DiskStore/sync()`` and
    /// ``DiskStore/close()`` sync too. Writes go on meanwhile (group commit).
    case interval(Duration)
}

/// Whether values are LZ4-compressed. A compressed form is kept only when it is smaller.
public enum CompressionPolicy: Sendable, Equatable {
    /// Values are stored as given.
    case never
    /// Values of at least `minimumSize` bytes are compressed; the result is kept when it saves at
    /// least 1/16 of the value.
    case automatic(minimumSize: Int)
    /// Every non-empty value is compressed; the result is kept when it is smaller at all.
    case always

    /// The default: compress values of 512 bytes and more (see the Performance article for the
    /// measurements behind the threshold).
    public static let `default` = CompressionPolicy.automatic(minimumSize: 512)
}

/// How a ``DiskStore`` is configured. Every field has a sensible default.
public struct StoreOptions: Sendable {
    /// A segment is sealed and a new one started once it reaches this many bytes. 4 KiB ... 2 GiB.
    /// A segment of 1 MiB or more is sealed in the background from 7/8 of this size, and may
    /// reach 9/8 of it before a write seals it itself (format-spec.md, "Rollover").
    ///
    /// Unless set, it follows from the byte limit: 64 MiB without one, else
    /// ``defaultSegmentSize(byteLimit:)`` (`byteLimit / 32`, between 4 KiB and 64 MiB), so that a
    /// byte limit alone is a valid configuration. Once set, the value set is used whatever the
    /// limit; the disk bound (``diskLimit``) grows with it.
    public var segmentSize: Int {
        get { explicitSegmentSize ?? Self.defaultSegmentSize(byteLimit: limits.byteLimit) }
        set { explicitSegmentSize = newValue }
    }
    /// The segment size set explicitly; nil while it follows from the byte limit.
    public private(set) var explicitSegmentSize: Int?
    /// See ``Durability``. Default `.interval(.seconds(1))`.
    public var durability: Durability = .interval(.seconds(1))
    /// How long records may wait in the write buffer before being handed to the OS, in any mode.
    /// The flush thread runs only while records wait (and, with `.interval(d)`, a sync thread only
    /// while records wait for their sync, once per `d`): an idle store causes no wake-ups. A
    /// flush hands records to the OS; it never syncs.
    public var flushInterval: Duration = .milliseconds(20)
    /// Bytes of records collected in memory before one `write(2)`. 4 KiB ... 64 MiB.
    public var writeBufferSize: Int = 1 << 20
    /// See ``CompressionPolicy``.
    public var compression: CompressionPolicy = .default
    /// Largest value accepted, in bytes; at most 1 GiB (the format's limit). Default 256 MiB.
    public var maximumValueSize: Int = 256 << 20
    /// Who may read the store's files besides their owner: ``StorePermissions/ownerOnly``
    /// (folders 0700, files 0600, whatever the umask) by default.
    public var permissions: StorePermissions = .ownerOnly
    /// Encryption at rest: nil (the default) stores values as they are; with keys, every value
    /// is sealed with AES-256-GCM under ``StoreEncryption/currentKey`` (DocC: "Security").
    /// A store is encrypted from its creation: opening one that holds unencrypted records with
    /// encryption on, or an encrypted one without the key, is refused and changes nothing.
    public var encryption: StoreEncryption? {
        didSet { keyring = encryption.map(Keyring.init) }
    }
    /// ``encryption``'s keys by id, made once (the key ids are HMACs).
    private(set) var keyring: Keyring?
    /// The key id new segments are written with: the current key's, 0 without encryption.
    var writtenKeyID: UInt32 { keyring?.currentID ?? 0 }
    /// Binds the keyring's seals to the store's id, read at open (format-spec.md, "Store id").
    mutating func bindStore(_ binding: StoreBinding?) { keyring = keyring?.bound(to: binding) }
    /// Whether segment `id`, sealed under `keyID` (0: unsealed), must be sealed again by
    /// compaction: under a previous key, or sealed before the store had an id (version 7).
    func needsReseal(segment id: UInt32, keyID: UInt32) -> Bool {
        keyID != 0 && (keyID != writtenKeyID || keyring?.binding?.isLegacy(segment: id) == true)
    }
    /// Where file I/O goes. Tests substitute a simulated or faulty file system.
    public var fileSystem: any CaskFileSystem = POSIXFileSystem()
    /// The clock for write, access and expiry times. The default, ``WallClock/system``,
    /// advances in steps of the kernel's tick (1 to 4 ms); ``WallClock/precise`` reads to the
    /// millisecond at about four times the cost.
    public var clock: WallClock = .system
    /// Where recovery reports, corruption and background failures are logged.
    public var logger: Logger = Logger(label: "cask")
    /// Size, count and age limits (none by default).
    public var limits = StoreLimits()
    /// Opens the store for reading only: nothing in the directory is ever created, written,
    /// renamed or deleted, so a store on a read-only directory or file system opens, and one that
    /// another process has open for writing opens beside it (no lock is taken). Recovery runs in
    /// memory only: a torn tail is ignored, not cut; keys the salvage rule drops are dropped from
    /// this process's index only. The store is as of the open; ``DiskStore/refresh()`` reloads it.
    /// Writes, trims and compaction throw ``CaskError/readOnly(path:)``; `sync()` does nothing.
    /// Access times of reads are kept in memory only. Default false.
    public var isReadOnly = false
    /// When compaction runs.
    public var compaction = CompactionPolicy()
    /// Called for every ``StoreEvent``, outside the store's lock, on the thread that caused it.
    public var eventHandler: (@Sendable (StoreEvent) -> Void)?

    /// Options with every default.
    public init() {}

    /// The bytes of segment and hint files a store manages toward under a byte limit:
    /// `byteLimit / liveRatio`, and at least 2 segments (nil without a byte limit). Live records
    /// fill up to `byteLimit` of it; the rest (three tenths, at the default `liveRatio` of 0.7) is
    /// garbage that compaction reclaims, kept so that compaction copies little per byte written.
    /// Pure; thread-safe.
    public var diskBudget: Int? {
        limits.byteLimit.map { max(Int((Double($0) / limits.liveRatio).rounded(.up)), 2 * segmentSize) }
    }

    /// The bytes of segment and hint files a store with a byte limit never exceeds:
    /// ``diskBudget`` `+ 4 × segmentSize` (nil without a byte limit): the budget, a segment of
    /// room for writes while compaction catches up (writers wait past it), a compaction output
    /// (up to a segment and an eighth, and the tombstones it must keep) with its hint file in
    /// flight, and the hint files of segments sealed meanwhile. The hit-ratio benchmark saw up
    /// to 3.0 segments past the budget; the fourth is margin, as the bound is measured, not
    /// proven. An item bigger than half a segment can raise it by its own size while it is
    /// written or copied. With the defaults that is about `1.55 × byteLimit` (LimitsAndEviction.md).
    /// Pure; thread-safe.
    public var diskLimit: Int? {
        diskBudget.map { $0 + 4 * segmentSize }
    }

    /// The most bytes one item's record may take under a byte limit: the byte limit itself (nil
    /// without one). A bigger item is refused (``CaskError/exceedsByteLimit(key:size:budget:)``)
    /// instead of evicting everything else. Pure; thread-safe.
    public var itemByteBudget: Int? {
        limits.byteLimit
    }

    /// The segment size used when ``segmentSize`` is not set, in bytes: 64 MiB without a byte
    /// limit; with one, `byteLimit / 32` rounded down to a multiple of 4 KiB, at least 4 KiB and
    /// at most 64 MiB. A thirty-second keeps the room the store takes above its disk budget
    /// (``diskLimit``) under a twelfth of the limit, and a limit of 2 GiB or more gets the
    /// 64 MiB default. Pure; thread-safe.
    public static func defaultSegmentSize(byteLimit: Int?) -> Int {
        guard let byteLimit else { return 64 << 20 }
        return min(64 << 20, max(4096, (byteLimit / 32) & ~4095))
    }

    func validate() throws(CaskError) {
        guard (4096...(1 << 31)) ~= segmentSize else {
            throw .invalidOption("segmentSize \(segmentSize) must be between 4 KiB and 2 GiB")
        }
        guard (4096...(64 << 20)) ~= writeBufferSize else {
            throw .invalidOption("writeBufferSize \(writeBufferSize) must be between 4 KiB and 64 MiB")
        }
        guard (0.1...0.95) ~= limits.liveRatio else { throw .invalidOption("limits.liveRatio must be between 0.1 and 0.95") }
        guard (0.05...1) ~= compaction.garbageRatio else { throw .invalidOption("compaction.garbageRatio must be between 0.05 and 1") }
        if let b = limits.byteLimit, b < 1 { throw .invalidOption("byteLimit must be at least 1 byte") }
        if let c = limits.countLimit, c < 1 { throw .invalidOption("countLimit must be at least 1") }
        if let a = limits.ageLimit, a < .milliseconds(1) { throw .invalidOption("ageLimit must be at least 1 ms") }
        guard (0...Format.maximumValueLength) ~= maximumValueSize else {
            throw .invalidOption("maximumValueSize must be between 0 and \(Format.maximumValueLength)")
        }
    }
}
