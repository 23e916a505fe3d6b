import Foundation
import Testing
@testable import Cask

/// The worked examples of format-spec.md, byte for byte.
@Suite struct FormatSpecTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }

    @Test func segmentHeaderMatchesTheSpecExample() {
        let header = SegmentHeader(id: 1, kind: .log, flags: 0, minimumSequence: 1, sequenceLimit: 0)
        #expect(hex(header.encoded()) == """
            43 41 53 4b 53 45 47 00 01 00 00 00 01 00 00 00 \
            01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 \
            00 00 00 00 00 00 00 00 7a 17 65 4f 00 00 00 00
            """)
    }

    @Test func recordMatchesTheSpecExample() {
        let key = Array("greeting".utf8), value = Array("hello".utf8)
        let header = RecordHeader(sequence: 7, writeTime: 1_800_000_000_000, expiry: 0, kind: .value, flags: 0,
                                  keyLength: key.count, storedLength: value.count, originalLength: value.count)
        var out = [UInt8](repeating: 0, count: header.encodedSize)
        key.withUnsafeBytes { k in value.withUnsafeBytes { v in out.withUnsafeMutableBytes { RecordCodec.encode(header, key: k, value: v, into: $0) } } }
        #expect(hex(out) == """
            c4 c8 3d 15 07 00 00 00 00 00 00 00 00 50 5c 18 \
            a3 01 00 00 00 00 00 00 00 00 00 00 01 00 08 00 \
            05 00 00 00 05 00 00 00 67 72 65 65 74 69 6e 67 \
            68 65 6c 6c 6f
            """)
        guard case .record(let decoded) = out.withUnsafeBytes({ RecordCodec.decode($0, at: 0) }) else {
            Issue.record("the example does not decode")
            return
        }
        #expect(decoded.sequence == 7 && decoded.keyLength == 8 && decoded.storedLength == 5)
    }

    @Test func crc32cKnownAnswerAndMask() {
        let bytes = Array("123456789".utf8)
        #expect(bytes.withUnsafeBytes { CRC32C.checksum($0) } == 0xE306_9283)
        // Hardware and table paths agree on lengths around the 8-byte stride.
        var rng = SeededBytes(seed: 5)
        let data = [UInt8](rng.random(4099))
        for n in [0, 1, 7, 8, 9, 63, 4099] {
            let whole = data.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            let split = data.withUnsafeBytes { raw in
                CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(n / 2)..<n]), extending: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<(n / 2)])))
            }
            #expect(whole == split)
        }
        // A zero-filled record header never validates.
        let zeros = [UInt8](repeating: 0, count: 256)
        if case .record = zeros.withUnsafeBytes({ RecordCodec.decode($0, at: 0) }) { Issue.record("zeros decoded as a record") }
    }

    @Test func lz4RejectsDamagedBlocksAndWrongLengths() {
        var rng = SeededBytes(seed: 11)
        let value = [UInt8](rng.compressible(10_000))
        let compressed = value.withUnsafeBytes { Compression.compress($0, policy: .always) }!
        #expect(compressed.count < value.count)
        var out = [UInt8](repeating: 0, count: value.count)
        #expect(compressed.withUnsafeBytes { c in out.withUnsafeMutableBytes { LZ4.decompress(c, into: $0) } })
        #expect(out == value)
        var short = [UInt8](repeating: 0, count: value.count - 1)
        #expect(!compressed.withUnsafeBytes { c in short.withUnsafeMutableBytes { LZ4.decompress(c, into: $0) } })
        var long = [UInt8](repeating: 0, count: value.count + 1)
        #expect(!compressed.withUnsafeBytes { c in long.withUnsafeMutableBytes { LZ4.decompress(c, into: $0) } })
        for cut in [1, compressed.count / 2, compressed.count - 1] {
            let truncated = Array(compressed.prefix(cut))
            #expect(!truncated.withUnsafeBytes { c in out.withUnsafeMutableBytes { LZ4.decompress(c, into: $0) } })
        }
    }

    @Test func compressionPolicyKeepsOnlyWhatSaves() {
        var rng = SeededBytes(seed: 2)
        let text = [UInt8](rng.compressible(4096)), noise = [UInt8](rng.random(4096))
        #expect(text.withUnsafeBytes { Compression.compress($0, policy: .never) } == nil)
        #expect(text.withUnsafeBytes { Compression.compress($0, policy: .default) } != nil)
        #expect(noise.withUnsafeBytes { Compression.compress($0, policy: .always) } == nil)
        let small = [UInt8](rng.compressible(100))
        #expect(small.withUnsafeBytes { Compression.compress($0, policy: .default) } == nil)
        #expect(small.withUnsafeBytes { Compression.compress($0, policy: .always) } != nil)
    }
}
