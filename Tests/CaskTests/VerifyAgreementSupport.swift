import Foundation
@testable import Cask
import CaskFormat
import CaskTesting

/// A small store made by the library on the simulated file system, with everything the
/// differential test needs to judge an open after damage: each key's newest value and where
/// every record of every key lies.
struct AgreementBase {
    static let root = "/store"
    var files: [String: [UInt8]] = [:]
    /// Each key's newest value (removed keys are absent).
    var latest: [String: [UInt8]] = [:]
    /// Every value ever written to each key.
    var history: [String: [[UInt8]]] = [:]
    /// Every record in the segments: file, offset, size, key.
    var records: [(file: String, offset: Int, size: Int, key: String)] = []
    /// The newest log segment's file name (format-spec.md, "Recovery on open", step 6).
    var newestLog = ""
    /// Encryption at rest of the store, or nil (format-spec.md, "Sealed records").
    var encryption: StoreEncryption?

    func options(_ fs: any CaskFileSystem) -> StoreOptions {
        var o = simulatedOptions(fs, durability: .none)
        o.compaction.isAutomatic = false
        o.encryption = encryption
        return o
    }

    /// `cask verify` of the store in `fs`, with the store's keys.
    func verifier(_ fs: any CaskFileSystem) -> StoreVerifier {
        StoreVerifier(directory: Self.root, fileSystem: fs, encryption: encryption)
    }

    /// Three sessions: puts (one compressible value), overwrites and removes, pins, a compaction.
    static func make(encrypted: Bool = false) throws -> AgreementBase {
        var base = AgreementBase()
        if encrypted { base.encryption = try StoreEncryption(currentKey: testKey(7)) }
        let fs = SimulatedFileSystem()
        var store = try DiskStore(directory: root, options: base.options(fs))
        for round in 0..<7 {
            if round == 3 || round == 5 {
                if round == 3 { try store.compact() }
                try store.close()
                store = try DiskStore(directory: root, options: base.options(fs))
            }
            for k in 0..<16 {
                let key = "key-\(k)"
                if (round * 7 + k) % 6 == 5 {
                    _ = try store.removeValue(forKey: key)
                    base.latest[key] = nil
                    continue
                }
                var value = Array("round \(round) key \(k) ".utf8)
                let length = k == 2 ? 600 : 30 + (round * 41 + k * 29) % 150
                while value.count < length { value.append(k == 2 ? UInt8(97 + value.count % 5) : UInt8(truncatingIfNeeded: value.count &* 13 &+ k)) }
                try store.setValue(value, forKey: key)
                base.latest[key] = value
                base.history[key, default: []].append(value)
            }
            // Pin records among the values: pinned in one session, one unpinned in the next.
            if round == 2 || round == 4 { for key in ["key-1", "key-8"] where base.latest[key] != nil { _ = try store.setPinned(round == 2 || key == "key-1", forKey: key) } }
        }
        try store.close()
        base.files = try fs.files(in: root)
        base.indexRecords()
        return base
    }

    /// Each key's newest record's segment file (records are appended in sequence order and
    /// segment names sort by id).
    var newestRecordFile: [String: String] {
        var newest: [String: (file: String, offset: Int)] = [:]
        for r in records where newest[r.key].map({ ($0.file, $0.offset) < (r.file, r.offset) }) ?? true { newest[r.key] = (r.file, r.offset) }
        return newest.mapValues(\.file)
    }

    /// Walks every segment's records (they tile the file from offset 48) and finds the newest log segment.
    mutating func indexRecords() {
        for (name, bytes) in files where name.hasSuffix(".cask") {
            if bytes[12] == Format.SegmentKind.log.rawValue, name > newestLog { newestLog = name }
            var offset = Format.segmentHeaderSize
            while case .record(let h) = bytes.withUnsafeBytes({ RecordCodec.decode($0, at: offset) }) {
                let key = String(decoding: bytes[(offset + 40)..<(offset + 40 + h.keyLength)], as: UTF8.self)
                records.append((name, offset, h.encodedSize, key))
                offset += h.encodedSize
            }
        }
    }

    /// A fresh simulated file system holding `files` under ``root``.
    static func install(_ files: [String: [UInt8]]) throws -> SimulatedFileSystem {
        try SimulatedFileSystem.holding(files, in: root)
    }
}

/// One seeded damage to a copy of the base store's files: what it did, and which segment
/// bytes it changed (for telling intact keys from the others).
struct Damage: CustomStringConvertible {
    var description = ""
    /// Segment file name and the byte range changed in it (a truncation: from the cut to the old end).
    var changed: [(file: String, range: Range<Int>)] = []
    /// The file damaged (flips, truncations and forged records in place).
    var file = ""

    /// Applies damage number `seed` to `files`.
    static func apply(seed: UInt64, to files: inout [String: [UInt8]], base: AgreementBase) -> Damage {
        var rng = SplitMix(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        func pick(_ n: Int) -> Int { Int(rng.next() % UInt64(max(n, 1))) }
        let segments = files.keys.filter { $0.hasSuffix(".cask") }.sorted()
        let hints = files.keys.filter { $0.hasSuffix(".hint") }.sorted()
        var d = Damage()
        switch pick(8) {
        case 0, 1:   // flip bytes of any file
            let names = files.keys.filter { $0 != "LOCK" }.sorted()
            let name = names[pick(names.count)]
            let at = pick(files[name]!.count), mask = UInt8(1 + pick(255))
            files[name]![at] ^= mask
            d.note("flip \(name)@\(at) ^ \(mask)", name, at..<(at + 1))
        case 2:   // truncate a segment, hint or INDEX
            let names = files.keys.filter { $0 != "LOCK" }.sorted()
            let name = names[pick(names.count)]
            let old = files[name]!.count, at = pick(old)
            files[name]!.removeSubrange(at...)
            d.note("truncate \(name) to \(at) of \(old)", name, at..<old)
        case 3:   // a record rewritten in place with a valid checksum and an out-of-range sequence number
            let r = base.records[pick(base.records.count)]
            let sequence = Format.maximumSequence + 1 + rng.next() % (UInt64.max - Format.maximumSequence)
            files[r.file]!.withUnsafeMutableBytes { raw in
                raw.put(sequence, at: r.offset + 4)
                let covered = UnsafeRawBufferPointer(rebasing: raw[(r.offset + 4)..<(r.offset + r.size)])
                raw.put(CRC32C.mask(CRC32C.checksum(covered)), at: r.offset)
            }
            d.note("forge \(r.file)@\(r.offset) (\(r.key)) sequence \(sequence)", r.file, r.offset..<(r.offset + r.size))
        case 4:   // a forged record with a valid checksum appended to a segment
            let name = segments[pick(segments.count)]
            let end = files[name]!.count
            files[name]! += forgedRecord(key: "key-\(pick(20))", sequence: Format.maximumSequence + 1 + UInt64(pick(1000)), tombstone: pick(2) == 0)
            d.note("append forged record to \(name)", name, end..<files[name]!.count)
        case 5:   // a segment header
            let name = segments[pick(segments.count)]
            let at = pick(Format.segmentHeaderSize), mask = UInt8(1 + pick(255))
            files[name]![at] ^= mask
            d.note("flip header \(name)@\(at) ^ \(mask)", name, at..<(at + 1))
        case 6:   // a hint file
            let name = hints[pick(hints.count)]
            let at = pick(files[name]!.count)
            if pick(2) == 0 { files[name]![at] ^= 0x41; d.description = "flip hint \(name)@\(at)" } else { files[name]!.removeSubrange(at...); d.description = "truncate hint \(name) to \(at)" }
        default:   // INDEX
            guard files["INDEX"] != nil else { d.description = "none"; break }
            let at = pick(files["INDEX"]!.count)
            if pick(2) == 0 { files["INDEX"]![at] ^= 0x10; d.description = "flip INDEX@\(at)" } else { files["INDEX"]!.removeSubrange(at...); d.description = "truncate INDEX to \(at)" }
        }
        return d
    }

    mutating func note(_ what: String, _ file: String, _ range: Range<Int>) {
        description = what
        self.file = file
        if file.hasSuffix(".cask") { changed.append((file, range)) }
    }

    static func forgedRecord(key: String, sequence: UInt64, tombstone: Bool) -> [UInt8] {
        let keyBytes = Array(key.utf8), value = Array("forged".utf8)
        let stored = tombstone ? 0 : value.count
        let header = RecordHeader(sequence: sequence, writeTime: 1_800_000_000_000, expiry: 0, kind: tombstone ? .tombstone : .value,
                                  flags: 0, keyLength: keyBytes.count, storedLength: stored, originalLength: stored)
        var record = [UInt8](repeating: 0, count: header.encodedSize)
        record.withUnsafeMutableBytes { out in
            keyBytes.withUnsafeBytes { k in value.prefix(stored).withUnsafeBytes { v in RecordCodec.encode(header, key: k, value: v, into: out) } }
        }
        return record
    }

    /// Keys none of whose records the damage changed, none of whose records lies after a change
    /// in the newest log segment, and none that the salvage rule may drop: a change to a sealed
    /// segment without a hint file (a segment continued from an earlier session and sealed as the
    /// store closed gets none) may have held a newer record of any key, so every key whose newest
    /// record lies in that segment or an older one may go (format-spec.md, "Recovery on open", 7).
    func intactKeys(_ base: AgreementBase) -> Set<String> {
        var damaged = tailKeys(base)
        for c in changed where c.file != base.newestLog && base.files[c.file.replacingOccurrences(of: ".cask", with: ".hint")] == nil {
            for (key, newest) in base.newestRecordFile where newest <= c.file { damaged.insert(key) }
        }
        for r in base.records {
            for c in changed where c.file == r.file && r.offset < c.range.upperBound && c.range.lowerBound < r.offset + r.size {
                damaged.insert(r.key)
            }
        }
        return Set(base.latest.keys).subtracting(damaged)
    }

    /// Keys with a record at or after a change in the newest log segment: rule 6 ("Torn tail")
    /// cuts everything from the first damaged byte there as a write a crash cut short, so such
    /// a key may come back with an older value, or an older absence, as after a crash.
    func tailKeys(_ base: AgreementBase) -> Set<String> {
        var keys = Set<String>()
        for c in changed where c.file == base.newestLog {
            for r in base.records where r.file == c.file && r.offset + r.size > c.range.lowerBound { keys.insert(r.key) }
        }
        return keys
    }

    /// Whether `value` (nil: absent) is what a store may hold for `key` after this damage: its
    /// newest value or nothing; for a key in ``tailKeys(_:)``, also any value written to it before.
    func allows(_ value: [UInt8]?, for key: String, tail: Set<String>, base: AgreementBase) -> Bool {
        guard let value else { return true }
        if value == base.latest[key] { return true }
        return tail.contains(key) && base.history[key]?.contains(value) == true
    }
}
