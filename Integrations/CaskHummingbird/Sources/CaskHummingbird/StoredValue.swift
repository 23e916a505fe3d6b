import Cask
import Foundation
import Hummingbird

/// The bytes the driver stores for a value: an 8-byte marker naming the value's kind, then the
/// value's bytes.
///
/// The cache stores a `Data` as its raw bytes and any other value encoded by its coder, so the
/// bytes alone cannot tell a `Data` from an encoded value (`Data("42".utf8)` is also the JSON of
/// `42`). Hummingbird's `MemoryPersistDriver` throws `PersistError.invalidConversion` when a value
/// is read as another Swift type; the marker lets the driver refuse at least a read of the other
/// kind, across restarts. The marker lives in the value because Cask's per-entry labels (tags)
/// exist only for loader-API entries, which always expire.
///
/// Values without a marker were stored by an earlier version of the driver (or through the
/// cache directly) and read as they always did: as `Data`, their stored bytes; as any other
/// type, decoded by the cache's coder. A `Data` of those days whose bytes happen to begin with a
/// marker would be read as a marked value.
enum StoredValue {
    /// What a marked value holds.
    enum Kind: UInt8 {
        /// A `Data`, as its bytes.
        case raw = 0x72       // "r"
        /// Any other `Codable` value (a `ByteBuffer` too), encoded by the cache's coder.
        case encoded = 0x65   // "e"
    }

    /// The marker's first seven bytes; the eighth is the ``Kind``.
    static let magic = Data("\u{0}CaskHB".utf8)
    static let markerLength = magic.count + 1

    /// `value` with its marker: raw when it is a `Data`, else encoded by `coder`.
    /// - Throws: ``Cask/CaskError/coding(key:reason:)`` when `coder` cannot encode it.
    static func bytes<T: Encodable>(of value: T, forKey key: String, coder: any CacheCoder) throws(CaskError) -> Data {
        if T.self == Data.self { return marked(.raw, value as! Data) }
        do { return marked(.encoded, try coder.encode(value)) } catch {
            throw CaskError.coding(key: key, reason: "\(error)")
        }
    }

    /// `stored` read as a `T`: the bytes of a raw value as `Data`, an encoded value decoded by
    /// `coder` as anything else; an unmarked value as before the marker.
    /// - Throws: `PersistError.invalidConversion` for the other kind, or bytes `coder` cannot
    ///   decode as a `T`.
    static func value<T: Decodable>(_ type: T.Type, from stored: Data, coder: any CacheCoder) throws(PersistError) -> T {
        let (kind, payload) = parse(stored)
        let asksForBytes = T.self == Data.self
        switch (kind, asksForBytes) {
        case (.raw?, false), (.encoded?, true): throw .invalidConversion
        case (_, true): return payload as! T
        case (_, false):
            do { return try coder.decode(T.self, from: payload) } catch { throw .invalidConversion }
        }
    }

    /// The kind of `stored` (nil without a marker) and the value's bytes.
    static func parse(_ stored: Data) -> (kind: Kind?, payload: Data) {
        guard stored.count >= markerLength, stored.starts(with: magic),
              let kind = Kind(rawValue: stored[stored.startIndex + magic.count]) else { return (nil, stored) }
        return (kind, Data(stored.dropFirst(markerLength)))   // a copy: indices from 0
    }

    private static func marked(_ kind: Kind, _ payload: Data) -> Data {
        var bytes = Data(capacity: markerLength + payload.count)
        bytes.append(magic)
        bytes.append(kind.rawValue)
        bytes.append(payload)
        return bytes
    }
}
