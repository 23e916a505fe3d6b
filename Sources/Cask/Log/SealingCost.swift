import CaskFormat
import Foundation

/// What sealing and opening one record costs, with no I/O around it (`cask-harness seal-cost`,
/// the Performance article): the figure that bounds how close encrypted puts and gets can come
/// to unencrypted ones. A benchmark hook at `package` access, not API.
package enum SealingCost {
    /// Nanoseconds per seal and per open of a record with a 16-byte key and a `valueSize`-byte
    /// value, the median of `runs` runs of `count` records each, under a random key.
    package static func measure(valueSize: Int, count: Int, runs: Int) throws(CaskError) -> (seal: Double, open: Double) {
        let keyring = Keyring(try StoreEncryption(currentKey: EncryptionKey())).bound(to: .random(legacyLimit: 0))
        var sealer = RecordSealer(keyring: keyring)
        let key = [UInt8](repeating: 0x6B, count: 16), value = [UInt8](repeating: 0x61, count: valueSize)
        let header = RecordHeader(sequence: 1, writeTime: 1, expiry: 0, kind: .value, flags: Format.RecordFlag.sealed,
                                  keyLength: key.count, storedLength: valueSize + Format.Seal.overhead, originalLength: valueSize)
        var record = [UInt8](repeating: 0, count: header.encodedSize)
        var seals: [Double] = [], opens: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<count { seal(&record, header: header, key: key, value: value, with: &sealer) }
            let sealed = DispatchTime.now().uptimeNanoseconds
            var opened = 0
            for _ in 0..<count { opened += open(record, header: header, keyring: keyring) }
            let end = DispatchTime.now().uptimeNanoseconds
            guard opened == count * valueSize else { throw .corruption(file: "(memory)", offset: 0, reason: "a sealed record did not open") }
            seals.append(Double(sealed - start) / Double(count))
            opens.append(Double(end - sealed) / Double(count))
        }
        return (seals.sorted()[runs / 2], opens.sorted()[runs / 2])
    }

    private static func seal(_ record: inout [UInt8], header: RecordHeader, key: [UInt8], value: [UInt8], with sealer: inout RecordSealer) {
        record.withUnsafeMutableBytes { out in
            key.withUnsafeBytes { k in
                value.withUnsafeBytes { v in
                    RecordCodec.encode(header, key: k, into: out) { stored in sealer.seal(v, into: stored, record: out, keyLength: k.count) }
                }
            }
        }
    }

    private static func open(_ record: [UInt8], header: RecordHeader, keyring: Keyring) -> Int {
        record.withUnsafeBytes { raw in
            ValueCodec.decode(raw, of: header, keyring: keyring, segment: 1) { value, _ in value.count } ?? 0
        }
    }
}
