import Testing
import CaskFormat
@testable import Cask

/// The index's arrays grow by chunks, never by copying (ChunkedArray, KeyArena), and the hint
/// entries of the active segment by parts (HintBuilder): each checked against a plain array.
@Suite struct ChunkedStorageTests {
    /// Random appends, overwrites, removals and reads, with chunks of 16 elements and a first
    /// chunk that grew by doubling or was filled whole at creation (of any size), agree with an
    /// `Array`.
    @Test(arguments: [0, 1, 5, 16, 37])
    func matchesAnArrayUnderRandomChanges(adopted: Int) {
        var rng = SeededBytes(seed: UInt64(adopted) + 11)
        var model = (0..<adopted).map { Int($0) * 3 }
        var array = adopted == 0 ? ChunkedArray<Int>(chunkShift: 4) : ChunkedArray(unsafeUninitializedCount: adopted, chunkShift: 4) { buffer in
            _ = buffer.initialize(from: model)
        }
        for step in 0..<20_000 {
            switch rng.next() % 10 {
            case 0...4:
                array.append(step)
                model.append(step)
            case 5...6 where !model.isEmpty:
                array.removeLast()
                model.removeLast()
            case 7 where !model.isEmpty:
                let n = Int(rng.next() % UInt64(model.count))
                array[n] = -step
                model[n] = -step
            default:
                guard !model.isEmpty else { continue }
                let n = Int(rng.next() % UInt64(model.count))
                #expect(array[n] == model[n], "step \(step), element \(n)")
            }
            #expect(array.count == model.count)
        }
        #expect(array.indices.map { array[$0] } == model)
        for (count, shift) in [(100, 4), (40_000, 14)] {   // the first chunk filled whole, then more
            var filled = ChunkedArray(repeating: 5, count: count, chunkShift: shift)
            filled.append(6)
            #expect(filled.count == count + 1 && filled.indices.allSatisfy { filled[$0] == ($0 < count ? 5 : 6) })
        }
    }

    /// A copy keeps its elements when the original changes afterwards (copy-on-write).
    @Test func aCopyIsAValue() {
        var array = ChunkedArray<Int>(chunkShift: 2)
        for i in 0..<50 { array.append(i) }
        let copy = array
        for i in 0..<50 { array[i] = -i }
        array.append(99)
        var other = copy
        other.removeLast()
        #expect(copy.count == 50 && copy.indices.allSatisfy { copy[$0] == $0 })
        #expect(other.count == 49 && other[48] == 48)
        #expect(array.count == 51 && array[7] == -7)
    }

    /// Keys of random lengths (1 to the longest allowed) read back exactly; none straddles a
    /// chunk; the bytes skipped to keep them whole are reported as padding, and overwriting a
    /// key's place changes only it.
    @Test func keysNeverStraddleAChunkAndReadBackExactly() {
        var rng = SeededBytes(seed: 5)
        var arena = KeyArena()
        var placed: [(offset: UInt32, key: [UInt8])] = []
        var padding = 0
        while arena.count < 3 << KeyArena.chunkShift {
            let length = rng.next() % 4 == 0 ? Format.maximumKeyLength : Int(1 + rng.next() % 64)
            let key = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let added = key.withUnsafeBytes { arena.append($0) }
            let first = Int(added.offset) >> KeyArena.chunkShift, last = (Int(added.offset) + length - 1) >> KeyArena.chunkShift
            #expect(first == last, "a \(length)-byte key at \(added.offset) straddles a chunk")
            padding += added.padding
            placed.append((added.offset, key))
        }
        #expect(padding > 0 && arena.count == padding + placed.reduce(0) { $0 + $1.key.count })
        let replacement = [UInt8](repeating: 0xAB, count: placed[3].key.count)
        replacement.withUnsafeBytes { arena.overwrite(at: placed[3].offset, with: $0) }
        placed[3].key = replacement
        for p in placed {
            #expect(arena.withKey(at: p.offset, length: UInt16(p.key.count)) { Array($0) } == p.key)
            #expect(p.key.withUnsafeBytes { arena.holds($0, at: p.offset) })
        }
    }

    /// A segment whose hint entries fill several parts encodes to exactly the bytes one array
    /// holds, drops records from an offset and takes newer access times across the parts.
    @Test func hintEntriesInPartsEncodeAsOneBody() {
        var rng = SeededBytes(seed: 3)
        let codec = HintEntryCodecTests()
        let entries = codec.randomEntries(60_000, rng: &rng).map { e, key in
            // Long keys now and then, so entries meet the end of a part at many sizes.
            guard rng.next() % 50 == 0 else { return (e, key) }
            var long = e
            long.keyLength = Format.maximumKeyLength
            return (long, [UInt8](repeating: 7, count: Format.maximumKeyLength))
        }.retiled()
        var builder = HintBuilder()
        for (e, key) in entries {
            let header = RecordHeader(sequence: e.sequence, writeTime: e.writeTime, expiry: e.expiry, kind: e.kind, flags: e.flags,
                                      keyLength: e.keyLength, storedLength: e.storedLength, originalLength: e.originalLength)
            key.withUnsafeBytes { builder.add(header, offset: Int(e.offset), key: $0, accessTime: e.accessTime) }
        }
        let (whole, size) = codec.encode(entries)
        #expect(whole.count > 2 << 20, "the body spans parts")
        #expect(builder.encoded(segmentID: 9, segmentSize: Int64(size)) == whole)

        let touched = builder.encoded(segmentID: 9, segmentSize: Int64(size)) { _, offset in offset % 3 == 0 ? 42 : nil }
        let expected = entries.map { e, key in
            var e = e
            if e.offset % 3 == 0 { e.accessTime = 42 }
            return (e, key)
        }
        #expect(touched == codec.encode(expected).hint)

        let cut = entries[entries.count * 2 / 3].0.offset
        builder.removeRecords(from: Int(cut))
        let kept = Array(entries.prefix { $0.0.offset < cut })
        let keptSize = kept.last.map { $0.0.offset + UInt64($0.0.recordSize) }!
        #expect(builder.encoded(segmentID: 9, segmentSize: Int64(keptSize)) == codec.encode(kept).hint)
    }
}

private extension Array where Element == (HintEntry, [UInt8]) {
    /// The entries with offsets that tile a segment from its header again (after key lengths changed).
    func retiled() -> [(HintEntry, [UInt8])] {
        var offset = UInt64(Format.segmentHeaderSize)
        return map { e, key in
            var e = e
            e.offset = offset
            offset += UInt64(e.recordSize)
            return (e, key)
        }
    }
}

/// The slot table a growth will need is made ahead only while the index grows, and given back
/// once it stops: a full cache that only overwrites keeps no second table.
@Suite struct PreparedSlotTableTests {
    @Test func aPreparedTableIsMadeWhileGrowingAndGivenBackWhenGrowthStops() {
        var table = SlotTable(size: 1000)
        #expect(table.preparationTick(count: 600).wanted == nil, "60% full: no table yet")
        let wanted = table.preparationTick(count: 700).wanted
        #expect(wanted == 1500, "70% full and growing: a table half as large again")
        table.adoptPrepared([UInt64](repeating: 0, count: 1500))
        let held = table.memoryBytes
        #expect(table.preparationTick(count: 700).wanted == nil)
        for _ in 0..<(SlotTable.idleTicksBeforeRelease - 2) {
            #expect(table.preparationTick(count: 700).released == nil)
        }
        #expect(table.preparationTick(count: 701).released == nil, "an added entry restarts the count")
        for _ in 0..<(SlotTable.idleTicksBeforeRelease - 1) { #expect(table.preparationTick(count: 701).released == nil) }
        #expect(table.preparationTick(count: 701).released?.count == 1500)
        #expect(table.memoryBytes <= held - 1500 * 8)
        #expect(table.preparationTick(count: 701).wanted == nil, "not growing: nothing made")
        #expect(table.preparationTick(count: 720).wanted == 1500, "growing again")
    }
}
