import Foundation

/// The bytes of a ``SharedChange`` in a node's outbox (format-spec.md, "Shared-tier outbox"):
/// big-endian integers, every length checked against the bytes left before it is used.
enum SharedChangeCodec {
    static let formatVersion: UInt8 = 1

    static func encode(_ change: SharedChange) -> Data {
        var out = Data([formatVersion])
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) } }
        func i64(_ v: Int64) { withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) } }
        func bytes<C: Collection<UInt8>>(_ b: C) { u32(UInt32(b.count)); out.append(contentsOf: b) }
        let (op, name): (UInt8, String)
        switch change {
        case .set(let key, _): (op, name) = (1, key)
        case .remove(let key, _): (op, name) = (2, key)
        case .removePrefix(let p, _): (op, name) = (3, p)
        case .removeTag(let t, _): (op, name) = (4, t)
        }
        out.append(op)
        i64(change.version.microseconds)
        u32(change.version.node)
        bytes(Array(name.utf8))
        if case .set(_, let e) = change {
            i64(e.freshUntil)
            i64(e.expiry)
            u32(UInt32(e.tags.count))
            for tag in e.tags { bytes(Array(tag.utf8)) }
            bytes(e.value)
        }
        return out
    }

    /// The change in `data`; nil when the bytes are not one (a wrong version, a length past
    /// the end, bytes left over, text that is not UTF-8).
    static func decode(_ data: Data) -> SharedChange? {
        var r = Reader(data: [UInt8](data))
        guard r.u8() == formatVersion, let op = r.u8(), let ms = r.i64(), ms >= 0, let node = r.u32(), let name = r.text() else { return nil }
        let version = SharedVersion(microseconds: ms, node: node)
        let change: SharedChange
        switch op {
        case 1:
            guard let fresh = r.i64(), let expiry = r.i64(), let count = r.u32(), Int(count) <= r.left / 4 else { return nil }
            var tags: [String] = []
            for _ in 0..<count {
                guard let t = r.text() else { return nil }
                tags.append(t)
            }
            guard let value = r.bytes() else { return nil }
            change = .set(key: name, entry: SharedEntry(value: Data(value), freshUntil: fresh, expiry: expiry, tags: tags, version: version))
        case 2: change = .remove(key: name, version: version)
        case 3: change = .removePrefix(name, version: version)
        case 4: change = .removeTag(name, version: version)
        default: return nil
        }
        return r.left == 0 ? change : nil
    }

    private struct Reader {
        let data: [UInt8]
        var at = 0
        var left: Int { data.count - at }

        mutating func u8() -> UInt8? {
            guard left >= 1 else { return nil }
            defer { at += 1 }
            return data[at]
        }

        mutating func u32() -> UInt32? {
            guard left >= 4 else { return nil }
            defer { at += 4 }
            return data[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func i64() -> Int64? {
            guard left >= 8 else { return nil }
            defer { at += 8 }
            return Int64(bitPattern: data[at..<at + 8].reduce(0) { $0 << 8 | UInt64($1) })
        }

        mutating func bytes() -> ArraySlice<UInt8>? {
            guard let n = u32(), Int(n) <= left else { return nil }
            defer { at += Int(n) }
            return data[at..<at + Int(n)]
        }

        mutating func text() -> String? { bytes().flatMap { String(validating: $0, as: UTF8.self) } }
    }
}
