import Cask
import Foundation

/// Live data of a store as a cache's user counts it: items and their key and value bytes
/// (UTF-8 key bytes plus the value's size as set; no headers, no index).
struct HitRatioLiveData {
    var items = 0
    var bytes = 0
    /// Items stored LZ4-compressed (none expected: the values are random).
    var compressedItems = 0

    /// From the store's metadata: not an access, so LRU order does not change (for the time
    /// series). Reads each item's record header, not its value.
    static func listed(_ store: DiskStore) throws -> HitRatioLiveData {
        var live = HitRatioLiveData()
        for item in try store.allMetadata() {
            live.items += 1
            live.bytes += item.key.utf8.count + item.size
            if item.isCompressed { live.compressedItems += 1 }
        }
        return live
    }

    /// By reading every key back, value and all (for the end of a replay: each read is an
    /// access): the items still readable.
    static func readable(_ store: DiskStore) throws -> HitRatioLiveData {
        var live = HitRatioLiveData()
        for key in store.keys() {
            guard let size = try store.withValue(forKey: key, { $0.count }) else { continue }
            live.items += 1
            live.bytes += key.utf8.count + size
        }
        live.compressedItems = try listed(store).compressedItems
        return live
    }

    /// Bytes of the regular files in the store's directory (segments, hints and the rest), as
    /// `stat` gives their sizes: a check of the store's own ``StoreStatistics/fileBytes``.
    static func directoryBytes(_ path: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.reduce(0) { sum, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: (path as NSString).appendingPathComponent(name))
            guard attributes?[.type] as? FileAttributeType == .typeRegular else { return sum }
            return sum + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }
}

/// One point of the time series, every `--sample-every` requests. Sizes in bytes.
struct HitRatioSample: Encodable {
    /// Requests replayed so far.
    var requests: Int
    var seconds: Double
    /// Key and value bytes of the live items (``HitRatioLiveData/listed(_:)``), and their count.
    var liveBytes: Int
    var liveItems: Int
    /// The store's ``StoreStatistics/liveBytes``: live records, headers included.
    var storeLiveBytes: Int
    /// The store's ``StoreStatistics/liveByteTarget``.
    var liveByteTarget: Int?
    /// The store's ``StoreStatistics/fileBytes``: segment and hint files.
    var diskBytes: Int
    /// Hits over the requests since the previous sample (warm-up included).
    var windowHitRatio: Double
}

/// The JSON line `cask-harness hitratio` prints (keys in snake case, sorted). Sizes in bytes.
struct HitRatioReport: Encodable {
    var cache = "cask"
    var trace: String
    var policy: String
    /// MB/s held; 0: as fast as the store takes them.
    var rate: Double
    var byteLimit: Int
    var valueSize: Int
    var warmup: Double
    var hits: Int
    var requests: Int
    var hitRatio: Double
    /// Key and value bytes of the items read back at the end (``HitRatioLiveData/readable(_:)``).
    var liveBytes: Int
    var liveItems: Int
    var compressedItems: Int
    /// The store's statistics at the end: live records (headers included), items, the live target.
    var storeLiveBytes: Int
    var storeItemCount: Int
    var liveByteTarget: Int?
    /// Segment and hint files at the end (the store's count), the most seen, and the
    /// directory's regular files at the end by `stat`.
    var diskBytes: Int
    var diskBytesMax: Int
    var directoryBytes: Int
    /// Sets made, their key and value bytes, and the seconds the replay took.
    var sets: Int
    var userBytesWritten: Int
    var seconds: Double
    /// Record bytes put (``StoreStatistics/bytesWritten``) and compaction output and input.
    var storeBytesWritten: Int
    var compactionBytesWritten: Int
    var compactionBytesRead: Int
    /// `(storeBytesWritten + compactionBytesWritten) / userBytesWritten`.
    var writeAmplification: Double
    var evictionsBySize: Int
    var evictionsAhead: Int
    var compactions: Int
    var compactionsOnTheWritePath: Int
    var delayedWrites: Int
    var series: [HitRatioSample]

    init(settings: HitRatioSettings, replay: HitRatioReplay, stats: StoreStatistics, readable: HitRatioLiveData,
         directoryBytes: Int, seconds: Double) {
        (trace, policy, rate, byteLimit) = (settings.trace, settings.policy, settings.rate, settings.byteLimit)
        (valueSize, warmup, hits, requests) = (settings.valueSize, settings.warmup, replay.hits, replay.requests)
        hitRatio = Double(replay.hits) / Double(max(1, replay.requests))
        (liveBytes, liveItems, compressedItems) = (readable.bytes, readable.items, readable.compressedItems)
        (storeLiveBytes, storeItemCount, liveByteTarget) = (stats.liveBytes, stats.itemCount, stats.liveByteTarget)
        (diskBytes, diskBytesMax, self.directoryBytes) = (stats.fileBytes, max(replay.maxDiskBytes, stats.fileBytes), directoryBytes)
        (sets, userBytesWritten, self.seconds) = (replay.sets, replay.userBytes, seconds)
        (storeBytesWritten, compactionBytesWritten, compactionBytesRead) = (stats.bytesWritten, stats.compactionBytesWritten, stats.compactionBytesRead)
        writeAmplification = Double(stats.bytesWritten + stats.compactionBytesWritten) / Double(max(1, replay.userBytes))
        (evictionsBySize, evictionsAhead, compactions) = (stats.evictionsBySize, stats.evictionsAhead, stats.compactions)
        (compactionsOnTheWritePath, delayedWrites) = (stats.compactionsOnTheWritePath, stats.delayedWrites)
        series = replay.series
    }

    /// The report as one line of JSON, keys sorted.
    var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
