import CaskFormat
import Foundation
@testable import Cask

// Helpers for the encryption suites (the rest are in TestSupport.swift).

/// A fixed 256-bit key made from `seed`, so that a failing test can be re-run with its key.
func testKey(_ seed: UInt8) -> EncryptionKey {
    EncryptionKey(digest: testKeyBytes(seed))
}

/// The bytes of ``testKey(_:)``.
func testKeyBytes(_ seed: UInt8) -> [UInt8] {
    (0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 31 + Int(seed)) }
}

/// Test options with encryption on: `current` seals, `previous` keys may still open.
func encryptedOptions(_ current: EncryptionKey, previous: [EncryptionKey] = [], segmentSize: Int = 64 << 20) throws -> StoreOptions {
    var o = options(segmentSize: segmentSize)
    o.encryption = try StoreEncryption(currentKey: current, previousKeys: previous)
    return o
}

/// Changes the record of `segment` at `offset` with `change` (given its bytes from the header
/// on) and recomputes its checksum: what someone who can write the files, but has no key, can do.
func tamperRecord(_ segment: String, at offset: Int, _ change: (inout [UInt8]) -> Void) throws {
    var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
    let size = recordSize(file, at: offset)
    var record = Array(file[offset..<(offset + size)])
    change(&record)
    resealChecksum(&record)
    file.replaceSubrange(offset..<(offset + size), with: record)
    try Data(file).write(to: URL(fileURLWithPath: segment))
}

/// The size of the record at `offset` in a segment's bytes, from its header.
func recordSize(_ file: [UInt8], at offset: Int) -> Int {
    file.withUnsafeBytes { raw in
        Format.recordHeaderSize + Int(raw.u16(offset + Format.recordKeyLengthOffset)) + Int(raw.u32(offset + 32))
    }
}

/// Writes a record's checksum for its current bytes (format-spec.md, "Record").
func resealChecksum(_ record: inout [UInt8]) {
    let crc = record.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...]))) }
    withUnsafeBytes(of: crc.littleEndian) { record.replaceSubrange(0..<4, with: $0) }
}

/// A SHA-256 of every file in `path`, by name: to show that a refused open changed nothing.
func folderDigest(_ path: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        result[name] = hexDigits(data.withUnsafeBytes(Digest.sha256))
    }
    return result
}

/// `bytes` as lowercase hex digits.
func hexDigits<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    bytes.map { String(format: "%02x", $0) }.joined()
}
