#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CaskFormat

/// File-level steps that must happen in a crash-safe order (format-spec.md, "Crash safety").
enum StoreFiles {
    /// Creates a segment file holding only `header`, durable with its directory entry before it
    /// returns. A failure removes the partial file.
    /// `mapLength` is how much of it reads may map (the segment size limit for a log segment).
    static func createSegment(_ header: SegmentHeader, in directory: String, fs: any CaskFileSystem, mapLength: Int) throws(CaskError) -> SegmentFile {
        let id = UInt32(header.id)
        let path = FileNames.join(directory, FileNames.segment(id))
        let handle = try fs.open(path, mode: .appendOrCreate)
        do throws(CaskError) {
            try fs.truncate(handle, to: 0)
            let bytes = header.encoded()
            try bytes.withBytes { raw throws(CaskError) in try fs.appendAll(handle, raw) }
            try fs.sync(handle)
            try fs.syncDirectory(directory)
        } catch {
            fs.close(handle)
            try? fs.remove(path)   // harmless: a segment no record was written to; open removes an empty one too
            throw error
        }
        return SegmentFile(id: id, path: path, handle: handle, fileSystem: fs, mapLength: mapLength)
    }

    /// Replaces `name` in `directory` with `bytes`: write a temporary file, fsync it, rename it over
    /// the name, fsync the directory. A crash leaves either the old file or the new one.
    static func writeAtomically(_ bytes: [UInt8], to name: String, in directory: String, fs: any CaskFileSystem) throws(CaskError) {
        let path = FileNames.join(directory, name)
        let temporary = path + FileNames.temporarySuffix
        let handle = try fs.open(temporary, mode: .createTruncate)
        do throws(CaskError) {
            try bytes.withBytes { raw throws(CaskError) in try fs.appendAll(handle, raw) }
            try fs.sync(handle)
            fs.close(handle)
        } catch {
            fs.close(handle)
            try? fs.remove(temporary)   // harmless: an unfinished temporary file, which open removes too
            throw error
        }
        if name.hasSuffix(FileNames.hintSuffix) { CrashPoint.hintBeforeRename.reach() }
        do throws(CaskError) {
            try fs.rename(temporary, to: path)
        } catch {
            try? fs.remove(temporary)   // harmless: as above
            throw error
        }
        try fs.syncDirectory(directory)
    }

    /// Writes segment `id`'s hint file atomically, sealed first when `keyring` is set
    /// (format-spec.md, "File seals"). Every hint file is written here, so none is left unsealed
    /// in an encrypted store. Returns the file's size in bytes.
    @discardableResult
    static func writeHint(_ hint: [UInt8], of id: UInt32, in directory: String, keyring: Keyring?, fs: any CaskFileSystem) throws(CaskError) -> Int64 {
        let bytes = HintSeal.sealed(hint, keyring: keyring)
        try writeAtomically(bytes, to: FileNames.hint(id), in: directory, fs: fs)
        return Int64(bytes.count)
    }

    /// For read-only opens: `directory` must exist and hold at least one segment file; nothing
    /// is created. Throws ``CaskError/noStoreYet(path:)`` when it is missing or holds no
    /// segment, ``CaskError/notACaskStore(file:)`` when it holds another program's files, or
    /// ``CaskError/io(operation:path:errno:)`` when it cannot be listed.
    static func requireExistingStore(_ directory: String, fs: any CaskFileSystem) throws(CaskError) {
        let names: [String]
        do throws(CaskError) { names = try fs.contentsOfDirectory(directory) } catch {
            if case .io(_, _, ENOENT) = error { throw .noStoreYet(path: directory) }
            throw error
        }
        try requireStoreDirectory(directory, fs: fs)
        guard names.contains(where: { FileNames.id(in: $0, suffix: FileNames.segmentSuffix) != nil }) else {
            throw .noStoreYet(path: directory)
        }
    }

    /// Throws ``CaskError/notACaskStore(file:)`` when `directory` holds files but none of Cask's:
    /// Cask never writes into a folder that belongs to something else.
    static func requireStoreDirectory(_ directory: String, fs: any CaskFileSystem) throws(CaskError) {
        let names = try fs.contentsOfDirectory(directory)
        let ours = names.contains { $0 == FileNames.lock || FileNames.id(in: $0, suffix: FileNames.segmentSuffix) != nil }
        if !ours, let foreign = names.sorted().first(where: { !$0.hasPrefix(".") }) {
            throw .notACaskStore(file: FileNames.join(directory, foreign))
        }
    }
}
