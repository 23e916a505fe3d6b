import CaskFormat

/// The store id file, `STOREID` (format-spec.md, "Store id"): 48 bytes, checked strictly on
/// read (exact size, magic, version, reserved bytes, legacy limit, checksum), written once
/// (atomically: temporary file, fsync, rename, fsync of the folder) and never changed.
enum StoreIDFile {
    static let name = "STOREID"

    /// The file's bytes for `binding`.
    static func encoded(_ binding: StoreBinding) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Format.StoreID.fileSize)
        bytes.withUnsafeMutableBytes { out in
            for (i, b) in Format.StoreID.magic.enumerated() { out[i] = b }
            out.put(Format.StoreID.version, at: 8)
            for (i, b) in binding.id.enumerated() { out[16 + i] = b }
            out.put(UInt64(binding.legacyLimit), at: 32)
            let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<44])))
            out.put(crc, at: 44)
        }
        return bytes
    }

    enum Parsed: Equatable {
        case valid(StoreBinding)
        /// An intact file (checksum valid) of a newer version.
        case newerVersion(UInt32)
        /// What is wrong with it.
        case damaged(String)
    }

    /// Parses a whole file's bytes; every number is checked before it is used.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Parsed {
        guard bytes.count == Format.StoreID.fileSize else {
            return .damaged("is \(bytes.count) bytes long, not \(Format.StoreID.fileSize)")
        }
        guard Array(bytes[0..<8]) == Format.StoreID.magic else { return .damaged("does not start with CASKSID") }
        let crc = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<44])))
        guard crc == bytes.u32(44) else { return .damaged("fails its checksum") }
        let version = bytes.u32(8)
        if version > Format.StoreID.version { return .newerVersion(version) }
        guard version == Format.StoreID.version, bytes.u32(12) == 0, bytes.u32(40) == 0 else {
            return .damaged("has version \(version) or non-zero reserved bytes")
        }
        let limit = bytes.u64(32)
        guard limit <= UInt64(UInt32.max) else { return .damaged("names legacy segment limit \(limit), above the largest segment id") }
        return .valid(StoreBinding(id: Array(bytes[16..<32]), legacyLimit: UInt32(limit)))
    }

    /// The store's binding as its file holds it; nil when there is no file. Throws
    /// ``CaskError/storeIDUnusable(path:reason:)`` when it is there but not valid, and
    /// ``CaskError/io(operation:path:errno:)`` when it cannot be read (never taken for damage).
    static func read(in directory: String, fs: any CaskFileSystem) throws(CaskError) -> StoreBinding? {
        let path = FileNames.join(directory, name)
        guard let handle = try fs.openIfPresent(path) else { return nil }
        defer { fs.close(handle) }
        let size = try fs.size(handle)
        guard size == Int64(Format.StoreID.fileSize) else {
            throw .storeIDUnusable(path: path, reason: "is \(size) bytes long, not \(Format.StoreID.fileSize)")
        }
        var bytes = [UInt8](repeating: 0, count: Format.StoreID.fileSize)
        let complete = try bytes.withMutableBytes { raw throws(CaskError) in try fs.readExactly(handle, into: raw, at: 0) }
        guard complete else { throw .storeIDUnusable(path: path, reason: "ended while it was read") }
        switch bytes.withUnsafeBytes(parse) {
        case .valid(let binding): return binding
        case .newerVersion(let v): throw .unsupportedFormatVersion(file: path, found: v, supported: Format.StoreID.version)
        case .damaged(let reason): throw .storeIDUnusable(path: path, reason: reason)
        }
    }

    /// Whether `directory` has the file (a failed check throws, as any failed read).
    static func exists(in directory: String, fs: any CaskFileSystem) throws(CaskError) -> Bool {
        guard let handle = try fs.openIfPresent(FileNames.join(directory, name)) else { return false }
        fs.close(handle)
        return true
    }

    /// Writes `binding` as the store's id file, durably (format-spec.md, "Store id").
    static func write(_ binding: StoreBinding, in directory: String, fs: any CaskFileSystem) throws(CaskError) {
        try StoreFiles.writeAtomically(encoded(binding), to: name, in: directory, fs: fs)
    }
}
