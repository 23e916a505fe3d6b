import CaskFormat

/// What every seal of a store with encryption on binds besides the record or file it seals
/// (format-spec.md, "Store id"): the store's random id and its legacy limit, the 24 bytes at
/// 16..<40 of the store id file. A record, hint or snapshot sealed for another store, or for an
/// earlier store at the same path, then fails authentication. A value; `Sendable`.
struct StoreBinding: Sendable, Equatable {
    /// 16 bytes from the system's random source, drawn when the store (or its id file) was made.
    let id: [UInt8]
    /// Segments with an id up to this one were sealed before the store had an id (format
    /// version 7): their records are opened without the binding. 0 when there were none.
    let legacyLimit: UInt32

    init(id: [UInt8], legacyLimit: UInt32) {
        precondition(id.count == Format.StoreID.idSize, "StoreIDFile checks the id's size")
        self.id = id
        self.legacyLimit = legacyLimit
    }

    /// A new store's binding: a fresh id from the system's CSPRNG.
    static func random(legacyLimit: UInt32) -> StoreBinding {
        var generator = SystemRandomNumberGenerator()
        return StoreBinding(id: (0..<Format.StoreID.idSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) },
                            legacyLimit: legacyLimit)
    }

    /// The bytes a seal binds: the id, then the legacy limit as a little-endian `uint64`.
    var bytes: [UInt8] {
        var out = id
        withUnsafeBytes(of: UInt64(legacyLimit).littleEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// Whether records of segment `id` were sealed before the store had an id (version 7).
    func isLegacy(segment id: UInt32) -> Bool { id <= legacyLimit }

    /// Calls `body` with `base` (a record's version-7 associated data) followed by ``bytes``:
    /// on the stack (at most 1,092 bytes: no allocation per record).
    func appended<R>(to base: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let bound = bytes
        return withUnsafeTemporaryAllocation(byteCount: base.count + bound.count, alignment: 8) { out in
            if base.count > 0 { out.baseAddress!.copyMemory(from: base.baseAddress!, byteCount: base.count) }
            bound.withUnsafeBytes { (out.baseAddress! + base.count).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return body(UnsafeRawBufferPointer(out))
        }
    }
}
