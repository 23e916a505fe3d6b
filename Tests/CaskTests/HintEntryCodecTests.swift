import Foundation
import Testing
@testable import Cask
import CaskFormat

/// Version-3 hint entries (format-spec.md, "Hint entry"): what is written is read back exactly,
/// and anything else is refused rather than half-read.
@Suite struct HintEntryCodecTests {
    /// Entries for records that tile a segment from offset 48, with fields drawn from `rng`,
    /// extreme values included.
    func randomEntries(_ count: Int, rng: inout SeededBytes) -> [(HintEntry, [UInt8])] {
        let times: [Int64] = [0, 1, -1, .min, .max, 1_800_000_000_000, 1_800_000_000_001]
        var offset = UInt64(Format.segmentHeaderSize)
        // Steps of up to 2^40 (2^20 for long lists) from near the last sequence number a writer
        // may issue, or from a small one, never past it (format-spec.md, "Sequence numbers").
        let bigStep: UInt64 = count <= 100 ? 1 << 40 : 1 << 20
        var sequence: UInt64 = rng.next() % 3 == 0 ? Format.maximumSequence - UInt64(count + 1) * bigStep : rng.next() % 1000
        return (0..<count).map { _ in
            let kind: Format.RecordKind = [.value, .tombstone, .pin, .removal][Int(rng.next() % 4)]
            let key = (0..<Int(1 + rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let stored = kind == .value ? Int(rng.next() % 5000) : 0
            let compressed = kind == .value && stored > 0 && rng.next() % 2 == 0
            let pick = { (rng: inout SeededBytes) -> Int64 in rng.next() % 2 == 0 ? times[Int(rng.next() % 7)] : Int64(bitPattern: rng.next()) }
            let write = pick(&rng)
            // Tagged (format version 6): a value is then a cache entry; a removal removes a tag.
            let tagged = (kind == .value || kind == .removal) && rng.next() % 3 == 0
            var flags: UInt8 = (kind == .value || kind == .pin) && rng.next() % 2 == 0 ? Format.RecordFlag.pinned : 0
            if compressed { flags |= Format.RecordFlag.compressed }
            if tagged { flags |= kind == .value ? Format.RecordFlag.tagged | Format.RecordFlag.entry : Format.RecordFlag.tagged }
            let e = HintEntry(
                sequence: sequence, offset: offset, writeTime: write,
                expiry: rng.next() % 2 == 0 || kind == .removal ? 0 : pick(&rng), accessTime: rng.next() % 2 == 0 ? write : pick(&rng),
                kind: kind, flags: flags,
                keyLength: key.count, storedLength: stored, originalLength: compressed ? Int(1 + rng.next() % (1 << 30)) : stored)
            offset += UInt64(e.recordSize)
            sequence += 1 + rng.next() % (rng.next() % 4 == 0 ? bigStep - 1 : 3)
            return (e, key)
        }
    }

    func encode(_ entries: [(HintEntry, [UInt8])]) -> (hint: [UInt8], segmentSize: UInt64) {
        var encoder = HintEntryEncoder()
        var body: [UInt8] = []
        for (e, key) in entries { key.withUnsafeBytes { encoder.append(e, key: $0, to: &body) } }
        let size = entries.last.map { $0.0.offset + UInt64($0.0.recordSize) } ?? UInt64(Format.segmentHeaderSize)
        return (HintFile.encode(segmentID: 9, segmentSize: size, entryCount: entries.count, body: body), size)
    }

    func parse(_ hint: [UInt8], segmentSize: UInt64) -> (HintFile.Failure?, [(HintEntry, [UInt8])]) {
        var read: [(HintEntry, [UInt8])] = []
        let failure = hint.withUnsafeBytes { HintFile.parse($0, segmentID: 9, segmentSize: segmentSize) { e, key in read.append((e, Array(key))) } }
        return (failure, read)
    }

    func same(_ a: HintEntry, _ b: HintEntry) -> Bool {
        a.sequence == b.sequence && a.offset == b.offset && a.writeTime == b.writeTime && a.expiry == b.expiry
            && a.accessTime == b.accessTime && a.kind == b.kind && a.flags == b.flags && a.keyLength == b.keyLength
            && a.storedLength == b.storedLength && a.originalLength == b.originalLength
    }

    /// A sequence number past the last a writer issues, reached by a delta or by wrapping
    /// around, makes the hint invalid (its segment is scanned instead).
    @Test(arguments: [Format.maximumSequence + 1, UInt64.max, 0])
    func aSequenceNumberOutOfRangeMakesTheHintInvalid(second: UInt64) {
        var rng = SeededBytes(seed: 7)
        var entries = randomEntries(2, rng: &rng)
        entries[0].0.sequence = Format.maximumSequence - 1
        entries[1].0.sequence = second   // 0: the delta wraps around 2^64
        let (hint, size) = encode(entries)
        guard case .invalid = parse(hint, segmentSize: size).0 else {
            Issue.record("a hint entry with sequence \(second) after \(Format.maximumSequence - 1) was accepted")
            return
        }
    }

    @Test func everyEntryReadsBackExactly() {
        for seed in UInt64(1)...300 {
            var rng = SeededBytes(seed: seed)
            let entries = randomEntries(Int(rng.next() % 60), rng: &rng)
            let (hint, size) = encode(entries)
            let (failure, read) = parse(hint, segmentSize: size)
            #expect(failure == nil, "seed \(seed)")
            #expect(read.count == entries.count, "seed \(seed)")
            for (x, y) in zip(entries, read) where !same(x.0, y.0) || x.1 != y.1 {
                Issue.record("seed \(seed): wrote \(x.0), read \(y.0)")
                return
            }
        }
    }

    /// Every cut, every changed byte and a segment of another size is refused or, where the
    /// change still decodes, never visits a record outside the segment.
    @Test func damagedOrMismatchedEntriesAreRefused() {
        var rng = SeededBytes(seed: 77)
        let entries = randomEntries(12, rng: &rng)
        let (hint, size) = encode(entries)
        #expect(parse(hint, segmentSize: size + 1).0 != nil)
        #expect(parse(hint, segmentSize: size - 1).0 != nil)
        // Re-sealed bodies (valid checksums) with one byte changed or cut short.
        let body = Array(hint[Format.hintHeaderSize..<(hint.count - Format.hintTrailerSize)])
        for i in body.indices {
            for variant in [Array(body[..<i]), { var b = body; b[i] ^= 0x80; return b }()] {
                let resealed = HintFile.encode(segmentID: 9, segmentSize: size, entryCount: entries.count, body: variant)
                let (failure, read) = parse(resealed, segmentSize: size)
                if failure == nil {
                    #expect(read.allSatisfy { $0.0.offset + UInt64($0.0.recordSize) <= size }, "byte \(i)")
                }
            }
        }
    }

    /// The tagged bit (descriptor bit 7) on a tombstone or a pin entry is refused: only values
    /// and removals are tagged.
    @Test func taggedBitOnATombstoneOrPinIsRefused() {
        for kind in [Format.RecordKind.tombstone, .pin] {
            let e = HintEntry(sequence: 5, offset: UInt64(Format.segmentHeaderSize), writeTime: 1, expiry: 0, accessTime: 1,
                              kind: kind, flags: 0, keyLength: 3, storedLength: 0, originalLength: 0)
            let (hint, size) = encode([(e, Array("abc".utf8))])
            #expect(parse(hint, segmentSize: size).0 == nil)
            var body = Array(hint[Format.hintHeaderSize..<(hint.count - Format.hintTrailerSize)])
            body[0] |= HintEntryCodec.tagged
            #expect(parse(HintFile.encode(segmentID: 9, segmentSize: size, entryCount: 1, body: body), segmentSize: size).0 != nil, "\(kind)")
        }
    }

    /// A store whose hint files a version-2 writer wrote opens from them and reads every value.
    @Test func versionTwoHintsStillLoad() throws {
        let dir = TemporaryDirectory()
        var o = StoreOptions()
        o.segmentSize = 4096
        do {
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<40 { try store.setValue(Data(repeating: UInt8(i), count: 200), forKey: "k\(i)", timeToLive: i % 3 == 0 ? .seconds(3600) : nil) }
            try store.removeValue(forKey: "k5")
            try store.close()
        }
        try removeIndexSnapshot(dir.path)
        let hints = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }
        #expect(hints.count >= 2)
        for name in hints { try rewriteAsOlderVersion(2, path: dir.file(name)) }
        let store = try DiskStore(directory: dir.path, options: o)
        #expect(store.statistics.segmentsLoadedFromHints == hints.count)
        for i in 0..<40 {
            #expect(try store.value(forKey: "k\(i)") == (i == 5 ? nil : Data(repeating: UInt8(i), count: 200)))
            #expect((try store.metadata(forKey: "k\(i)")?.expirationDate != nil) == (i % 3 == 0 && i != 5))
        }
        try store.close()
    }
}
