import CaskFormat

/// The seal of one file of a store with encryption on: a hint file or the index snapshot
/// (format-spec.md, "File seals"). One GMAC tag per section of the file, under the key derived
/// from a store key (``Keyring/fileSealKey(of:)``), with the nonce of section `n` made of 8
/// random bytes drawn for the file (the *base*) and `n`. Someone who can write the files but
/// has no key cannot make a seal that holds, so a hint or snapshot that opens was written by
/// the store. A value: one per file written or read.
struct FileSealer: Sendable {
    let keyID: UInt32
    let base: UInt64
    private let key: AESGCMKey
    /// The store binding each section's tag covers first (format version 8); nil for a store
    /// with no id yet (read-only opens of a version-7 store).
    private let binding: [UInt8]?

    /// A new seal under the keyring's current key, with a new base.
    init(keyring: Keyring) {
        keyID = keyring.currentID
        key = keyring.currentFileSealKey
        base = UInt64.random(in: .min ... .max)
        binding = keyring.binding?.bytes
    }

    /// The seal a file names; nil when its key is not in the ring.
    init?(keyring: Keyring, keyID: UInt32, base: UInt64) {
        guard let key = keyring.fileSealKey(keyID) else { return nil }
        self.keyID = keyID
        self.key = key
        self.base = base
        binding = keyring.binding?.bytes
    }

    /// A GMAC of section `section`, fed as the file is written or read (the store binding,
    /// when there is one, is fed first).
    func stream(section: UInt32) -> GMACStream {
        var nonce = [UInt8](repeating: 0, count: Format.Seal.nonceSize)
        nonce.withUnsafeMutableBytes { $0.put(base, at: 0); $0.put(section, at: Format.FileSeal.baseSize) }
        let stream = GMACStream(key: key, nonce: nonce)
        binding?.withUnsafeBytes { stream.update($0) }
        return stream
    }

    /// The tag of `bytes` as section `section`.
    func tag(_ bytes: UnsafeRawBufferPointer, section: UInt32) -> [UInt8] {
        let stream = stream(section: section)
        stream.update(bytes)
        return stream.finish()
    }

    /// The seal's bytes: key id, base, `tags` in section order, `magic`.
    func encoded(tags: [[UInt8]], magic: UInt32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Format.Seal.keyIDSize + Format.FileSeal.baseSize)
        out.withUnsafeMutableBytes { $0.put(keyID, at: 0); $0.put(base, at: Format.Seal.keyIDSize) }
        for tag in tags { out += tag }
        withUnsafeBytes(of: magic.littleEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// The key id, base and tags of the seal that ends `bytes`, with `sections` tags and
    /// `magic`; nil when `bytes` does not end with one.
    static func decode(_ bytes: UnsafeRawBufferPointer, sections: Int, magic: UInt32) -> (keyID: UInt32, base: UInt64, tags: [[UInt8]])? {
        let size = Format.FileSeal.size(sections: sections)
        guard bytes.count >= size, bytes.u32(bytes.count - 4) == magic else { return nil }
        let start = bytes.count - size
        let tagsAt = start + Format.Seal.keyIDSize + Format.FileSeal.baseSize
        let tags = (0..<sections).map { n in Array(bytes[(tagsAt + n * Format.FileSeal.tagSize)..<(tagsAt + (n + 1) * Format.FileSeal.tagSize)]) }
        return (bytes.u32(start), bytes.u64(start + Format.Seal.keyIDSize), tags)
    }

    /// Why a file's seal cannot be checked (`cask verify` and the logs print it).
    struct Problem: Error {
        let reason: String
    }

    /// The sealer and tags of the seal that ends `bytes` (with `sections` tags and `magic`),
    /// ready to check the file; the problem when it has none or names a key not in `keyring`.
    static func found(_ bytes: UnsafeRawBufferPointer, sections: Int, magic: UInt32, keyring: Keyring) -> Result<(sealer: FileSealer, tags: [[UInt8]]), Problem> {
        guard let seal = decode(bytes, sections: sections, magic: magic) else { return .failure(Problem(reason: "no seal (encryption is on)")) }
        guard let sealer = FileSealer(keyring: keyring, keyID: seal.keyID, base: seal.base) else {
            return .failure(Problem(reason: "sealed under key id \(StoreEncryption.keyIDText(seal.keyID)), which is not given"))
        }
        return .success((sealer, seal.tags))
    }

    /// Whether two tags are equal, in time that does not depend on where they differ.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

/// Hint files of a store with encryption on end with a one-section seal over every byte before
/// it (format-spec.md, "File seals"); other stores' hint files have none.
enum HintSeal {
    /// `hint` with its seal appended when `keyring` is set; unchanged otherwise.
    static func sealed(_ hint: [UInt8], keyring: Keyring?) -> [UInt8] {
        guard let keyring else { return hint }
        let sealer = FileSealer(keyring: keyring)
        let tag = hint.withUnsafeBytes { sealer.tag($0, section: 0) }
        return hint + sealer.encoded(tags: [tag], magic: Format.FileSeal.hintMagic)
    }

    /// Removes the seal from `bytes` (a hint file's contents) when it holds and returns nil;
    /// returns why not otherwise, leaving `bytes` as they were. With no keyring there is nothing
    /// to check. A hint that fails is only ignored: open scans its segment instead.
    static func open(_ bytes: inout [UInt8], keyring: Keyring?) -> String? {
        guard let keyring else { return nil }
        let problem = bytes.withUnsafeBytes { raw -> String? in
            switch FileSealer.found(raw, sections: 1, magic: Format.FileSeal.hintMagic, keyring: keyring) {
            case .failure(let problem): return problem.reason
            case .success(let found):
                let body = UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - Format.FileSeal.size(sections: 1))])
                return FileSealer.same(found.sealer.tag(body, section: 0), found.tags[0]) ? nil : "its seal does not hold"
            }
        }
        if problem == nil { bytes.removeLast(Format.FileSeal.size(sections: 1)) }
        return problem
    }
}
