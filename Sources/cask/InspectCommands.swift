import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List items: sizes, compression, age, last access, TTL left, pinned, key.",
        discussion: "In key order (the default) items stream out one at a time: memory stays near the store's index. Other orders sort every item first. Items come from the index and their records' headers; values are not read, so a value damaged on disk is still listed: `cask get` or `cask verify` finds it.")

    enum Sort: String, ExpressibleByArgument, CaseIterable { case key, size, age, access }

    @Argument(help: "The store directory.") var directory: String
    @Option(help: "Sort by key (ascending, by UTF-8 bytes), size (largest first), age (oldest first) or access (least recent first).") var sort: Sort = .key
    @Option(help: "Only keys starting with this prefix.") var prefix: String?
    @Option(parsing: .unconditional, help: "At most this many items.") var limit: Int?
    @Flag(help: "JSON output with raw numbers (bytes, milliseconds since the epoch), one item per line.") var json = false

    func validate() throws {
        if let limit { try ArgumentValues.count(limit, option: "--limit") }
    }

    func run() throws {
        let store = try openStore(directory, for: .read)
        defer { try? store.close() }
        let printer = ItemPrinter(json: json)
        printer.begin()
        var shown = 0
        let accept = { (m: ItemMetadata) -> Bool in
            guard prefix.map({ m.key.utf8.starts(with: $0.utf8) }) ?? true else { return true }
            guard shown < (limit ?? .max) else { return false }
            printer.item(m)
            shown += 1
            return true
        }
        if sort == .key {
            try withStoreErrors { try store.forEachItemInKeyOrder(accept) }
        } else {
            for m in sorted(try withStoreErrors { try store.allMetadata() }) where !accept(m) { break }
        }
        printer.end()
    }

    private func sorted(_ items: [ItemMetadata]) -> [ItemMetadata] {
        switch sort {
        case .key: return items
        case .size: return items.sorted { ($0.size, $1.key) > ($1.size, $0.key) }
        case .age: return items.sorted { ($0.writeDate, $0.key) < ($1.writeDate, $1.key) }
        case .access: return items.sorted { ($0.accessDate, $0.key) < ($1.accessDate, $1.key) }
        }
    }
}

/// Writes `ls` output one item at a time: a table with fixed-width columns and the key last
/// (escaped: control characters never break a line), or JSON with one object per line.
final class ItemPrinter {
    let json: Bool
    private var first = true
    private let now = Date()

    init(json: Bool) { self.json = json }

    func begin() {
        if json { print("[") } else { print("     SIZE    STORED  RATIO     AGE    ACCESSED      TTL  PIN  KEY") }
    }

    func item(_ m: ItemMetadata) {
        if json {
            print((first ? "" : ",") + Self.json(m))
        } else {
            let ratio = m.size > 0 ? Formatting.decimal(Double(m.size) / Double(max(1, m.storedSize)), places: 2) : "-"
            let cells = [Formatting.bytes(m.size).leftAligned(9), Formatting.bytes(m.storedSize).leftAligned(9), ratio.leftAligned(6),
                         Formatting.duration(now.timeIntervalSince(m.writeDate)).leftAligned(7),
                         (Formatting.duration(now.timeIntervalSince(m.accessDate)) + " ago").leftAligned(11),
                         (m.timeToLive(at: now).map(Formatting.duration) ?? "-").leftAligned(8), (m.isPinned ? "yes" : "").leftAligned(4)]
            print(cells.joined(separator: " ") + "  " + ArgumentValues.escaped(m.key))
        }
        first = false
    }

    func end() {
        if json { print("]") }
    }

    /// One item as a JSON object (keys sorted; `keyHex` only for keys with control characters).
    static func json(_ m: ItemMetadata) -> String {
        var fields = ["\"accessTime\":\(m.accessDate.millisecondsSinceEpoch)", "\"compressed\":\(m.isCompressed)"]
        if let e = m.expirationDate { fields.append("\"expiryTime\":\(e.millisecondsSinceEpoch)") }
        fields.append("\"key\":" + jsonString(m.key))
        if ArgumentValues.needsEscaping(m.key) { fields.append("\"keyHex\":\"\(ArgumentValues.hex(m.key))\"") }
        fields += ["\"pinned\":\(m.isPinned)", "\"size\":\(m.size)", "\"staleWindow\":\(m.hasStaleWindow)",
                   "\"storedSize\":\(m.storedSize)"]
        if !m.tags.isEmpty { fields.append("\"tags\":[" + m.tags.map(jsonString).joined(separator: ",") + "]") }
        fields.append("\"writeTime\":\(m.writeDate.millisecondsSinceEpoch)")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}

extension String {
    /// Right-aligned in a field of `width` characters (for numbers in table columns).
    func leftAligned(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Segments with live and dead bytes, totals and recovery counters.")

    @Argument(help: "The store directory.") var directory: String
    @Flag(help: "JSON output.") var json = false

    struct Output: Encodable {
        struct Segment: Encodable { var id: UInt32; var fileBytes: Int; var liveBytes: Int; var garbageRatio: Double; var active: Bool; var hint: Bool; var keyID: String? }
        var items: Int
        var liveBytes: Int
        var fileBytes: Int
        var deadBytes: Int
        var valueBytes: Int
        var storedValueBytes: Int
        var indexMemoryEstimate: Int
        var oldestWriteTime: Int64?
        var newestWriteTime: Int64?
        var segmentsScannedOnOpen: Int
        var segmentsFromHints: Int
        var damagedRanges: Int
        var tornTailBytes: Int
        var segments: [Segment]
        /// The encryption key ids the segments are sealed with (8 hex digits); empty when unencrypted.
        var keysInUse: [String]
    }

    func run() throws {
        let store = try openStore(directory, for: .read)
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        let stats = store.statistics
        let segments = store.segmentInfo()
        let keys = store.encryptionKeysInUse.map(StoreEncryption.keyIDText)
        let items = try withStoreErrors { try store.allMetadata() }
        try withStoreErrors { try store.close() }
        let valueBytes = items.reduce(0) { $0 + $1.size }
        let stored = items.reduce(0) { $0 + $1.storedSize }
        let indexBytes = stats.indexMemoryBytes
        let out = Output(
            items: stats.itemCount, liveBytes: stats.liveBytes, fileBytes: stats.fileBytes, deadBytes: stats.deadBytes,
            valueBytes: valueBytes, storedValueBytes: stored, indexMemoryEstimate: indexBytes,
            oldestWriteTime: items.map(\.writeDate).min()?.millisecondsSinceEpoch,
            newestWriteTime: items.map(\.writeDate).max()?.millisecondsSinceEpoch,
            segmentsScannedOnOpen: stats.segmentsScanned, segmentsFromHints: stats.segmentsLoadedFromHints,
            damagedRanges: stats.damagedRanges, tornTailBytes: stats.tornTailBytes,
            segments: segments.map { .init(id: $0.id, fileBytes: $0.fileBytes, liveBytes: $0.liveBytes, garbageRatio: $0.garbageRatio,
                                           active: $0.isActive, hint: $0.hasHint, keyID: $0.keyID == 0 ? nil : StoreEncryption.keyIDText($0.keyID)) },
            keysInUse: keys)
        if json {
            print(Formatting.json(out))
            return
        }
        print("items            \(out.items)")
        print("live bytes       \(Formatting.bytes(out.liveBytes))")
        print("file bytes       \(Formatting.bytes(out.fileBytes))")
        print("dead bytes       \(Formatting.bytes(out.deadBytes))")
        // Each sealed value carries its key id, nonce and tag (32 bytes), which LZ4 has no part in.
        let sealing = keys.isEmpty ? 0 : 32 * items.count
        let saving = valueBytes > 0 ? 100 * (1 - Double(stored - sealing) / Double(valueBytes)) : 0
        print("values           \(Formatting.bytes(valueBytes)) stored as \(Formatting.bytes(stored)) (compression saves \(String(format: "%.1f", saving))%\(sealing > 0 ? ", sealing adds \(Formatting.bytes(sealing))" : ""))")
        print("index memory     \(Formatting.bytes(indexBytes))")
        print("encryption       \(keys.isEmpty ? "off" : "AES-256-GCM, key ids in use: " + keys.joined(separator: ", "))")
        if let o = items.map(\.writeDate).min(), let n = items.map(\.writeDate).max() {
            print("oldest / newest  \(Formatting.duration(Date().timeIntervalSince(o))) / \(Formatting.duration(Date().timeIntervalSince(n))) ago")
        }
        if stats.indexLoadedFromSnapshot {
            print("open             index from the snapshot written at the last clean close")
        } else {
            print("open             \(stats.segmentsLoadedFromHints) segments from hints, \(stats.segmentsScanned) scanned, \(stats.damagedRanges) damaged ranges, \(stats.tornTailBytes) torn-tail bytes cut")
        }
        print("")
        print(Formatting.table(
            ["SEGMENT", "FILE", "LIVE", "GARBAGE", "HINT", "KEY", ""],
            segments.map { [String($0.id), Formatting.bytes($0.fileBytes), Formatting.bytes($0.liveBytes),
                             String(format: "%.0f%%", $0.garbageRatio * 100), $0.hasHint ? "yes" : "no",
                             $0.keyID == 0 ? "-" : StoreEncryption.keyIDText($0.keyID), $0.isActive ? "active" : ""] }))
    }
}

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the records of one segment as they lie on disk (for debugging the format); exit 1 when the store holds no such segment.")

    @Argument(help: "The store directory.") var directory: String
    @Argument(help: "The segment id (the number in its file name).") var segment: UInt32
    @Flag(help: "JSON output: an array of the records and the damaged ranges (kind \"damaged\", offset, size, reason) in file order.") var json = false

    func run() throws {
        let dump = try withStoreErrors { () throws -> SegmentDump in
            do {
                return try SegmentDump.read(directory: directory, segment: segment)
            } catch CaskError.io(_, _, ENOENT) {
                throw missingSegment()
            }
        }
        if json {
            print(Formatting.json(DumpItem.items(of: dump)))
            return
        }
        if let h = dump.header {
            print("segment \(h.id): \(h.kind)\(h.clearsOlder ? ", clears older" : ""), minimum sequence \(h.minimumSequence), sequence limit \(h.sequenceLimit)")
        } else {
            print("segment header DAMAGED")
        }
        print(Formatting.table(["OFFSET", "SIZE", "SEQ", "KIND", "FLAGS", "STORED", "ORIGINAL", "KEY"], dump.records.map { r -> [String] in
            let flags: String
            let sealed = r.sealedKeyID.map { "sealed " + StoreEncryption.keyIDText($0) } ?? ""
            if let target = r.pinTarget {
                flags = [(r.pinned ? "pins" : "unpins") + " seq \(target)", sealed].filter { !$0.isEmpty }.joined(separator: " ")   // a pin record
            } else {
                flags = [r.compressed ? "lz4" : "", r.pinned ? "pinned" : "", r.isEntry ? "entry" : "", r.isTagged ? "tagged" : "", sealed]
                    .filter { !$0.isEmpty }.joined(separator: " ")
            }
            return [String(r.offset), String(r.size), String(r.sequence), r.kind, flags,
                    String(r.storedLength), String(r.originalLength), ArgumentValues.escaped(r.key)]
        }))
        for d in dump.damage { print("DAMAGED \(d.start)..<\(d.end): \(d.reason)") }
    }
}

extension Dump {
    /// Says why the segment file is missing: no folder or no store there (status 3), or a
    /// segment id the store does not hold (status 1: compaction removes the segments it
    /// rewrites), with the ids it holds. Writes nothing.
    func missingSegment() -> ExitCode {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            return noStore(directory, why: "the folder does not exist")
        }
        let ids = names.compactMap(Self.segmentID).sorted()
        guard !ids.isEmpty else {
            return noStore(directory, why: "the folder holds no segment file")
        }
        let shown = ids.prefix(20).map(String.init).joined(separator: ", ") + (ids.count > 20 ? " and \(ids.count - 20) more" : "")
        printError("cask: segment \(segment) is not in the store at \(directory) (compaction removes the segments it rewrites); it holds segment\(ids.count == 1 ? "" : "s") \(shown): dump one of those (`cask stats \(directory)` lists them with their sizes)")
        return Exit.no
    }

    /// The id in a segment file name (ten digits and `.cask`, format-spec.md), or nil.
    static func segmentID(_ name: String) -> UInt32? {
        guard name.hasSuffix(".cask") else { return nil }
        let stem = name.dropLast(5)
        return stem.count == 10 && stem.allSatisfy(\.isASCII) ? UInt32(stem) : nil
    }
}

/// One element of `cask dump --json`: a record, or a damaged range (`"kind": "damaged"`, its
/// `offset`, `size` in bytes and `reason`; a damaged segment header is one at offset 0), in
/// file order.
enum DumpItem: Encodable {
    case record(DumpedRecord)
    case damaged(offset: Int, size: Int, reason: String)

    static func items(of dump: SegmentDump) -> [DumpItem] {
        var damaged = dump.damage.map { DumpItem.damaged(offset: $0.start, size: $0.end - $0.start, reason: $0.reason) }
        if dump.header == nil { damaged.insert(.damaged(offset: 0, size: SegmentDump.headerSize, reason: "segment header damaged"), at: 0) }
        return (dump.records.map(DumpItem.record) + damaged).sorted { $0.offset < $1.offset }
    }

    var offset: Int {
        switch self {
        case .record(let r): r.offset
        case .damaged(let offset, _, _): offset
        }
    }

    private enum Key: String, CodingKey { case kind, offset, size, reason }

    func encode(to encoder: Encoder) throws {
        switch self {
        case .record(let r):
            try r.encode(to: encoder)
        case .damaged(let offset, let size, let reason):
            var c = encoder.container(keyedBy: Key.self)
            try c.encode("damaged", forKey: .kind)
            try c.encode(offset, forKey: .offset)
            try c.encode(size, forKey: .size)
            try c.encode(reason, forKey: .reason)
        }
    }
}

extension Date {
    /// Whole milliseconds since 1970 (as the store records times).
    var millisecondsSinceEpoch: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}
