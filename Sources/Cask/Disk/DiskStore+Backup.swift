import CaskFormat
import Foundation

extension DiskStore {
    /// Writes a consistent copy of the store into `destination`, which must not exist yet (or be
    /// an empty folder), while reads and writes go on. The copy opens as a normal store.
    ///
    /// What it holds: for a store open for writing, every write that returned before the call
    /// (the call syncs first); for a read-only store, the store as of its open or last
    /// ``refresh()``. Sealed segments are hard-linked when the file system allows (they never
    /// change; a compaction that deletes them later does not touch the copy's names), hint
    /// files too; the newest segment is copied up to its last complete record, as are segments
    /// that cannot be linked. Every file and the folder are synced before it returns.
    ///
    /// - Returns: how many bytes were copied and how many hard-linked.
    /// - Throws: ``CaskError/invalidOption(_:)`` when `destination` exists and is not an empty
    ///   folder, or is the store's folder or inside it; ``CaskError/io(operation:path:errno:)`` when a file cannot be written (what was
    ///   written to `destination` is then left for inspection, the store is untouched).
    @discardableResult
    public func backup(to destination: String) throws(CaskError) -> (copiedBytes: Int, linkedBytes: Int) {
        let fs = options.fileSystem
        try Self.requireOutside(destination, of: directory)
        try Self.requireEmptyDestination(destination, fs: fs)
        // One compaction pass at a time: none deletes a segment while the list is taken.
        let plan = try compactionLock.withLock { _ throws(CaskError) -> BackupPlan in
            try state.withLock { s throws(CaskError) -> BackupPlan in
                guard !s.isClosed else { throw .closed }
                if !options.isReadOnly { try s.syncActive() }
                return BackupPlan(s)
            }
        }
        try fs.createDirectory(destination)
        try Self.keepMode(of: directory, on: destination, fs: fs)
        // The copy is the same store: its seals bind this id (format-spec.md, "Store id").
        if let binding = options.keyring?.binding { try StoreIDFile.write(binding, in: destination, fs: fs) }
        var copied = 0, linked = 0
        for segment in plan.segments {
            let target = FileNames.join(destination, FileNames.segment(segment.file.id))
            // Harmless `try?`: a link that fails falls back to copying the bytes (which throws).
            if segment.mayLink, (try? fs.link(segment.file.path, to: target)) != nil {
                linked += Int(segment.size)
                if let hint = segment.hintPath { try? fs.link(hint, to: FileNames.join(destination, FileNames.hint(segment.file.id))) }
            } else {
                try Self.copy(segment.file, bytes: segment.size, to: target, fs: fs)
                try Self.keepMode(of: segment.file.path, on: target, fs: fs)
                copied += Int(segment.size)
            }
        }
        try fs.syncDirectory(destination)
        return (copied, linked)
    }

    /// The segments to copy, taken under the store's lock.
    private struct BackupPlan {
        struct Segment {
            var file: SegmentFile
            /// Bytes to copy: the whole file, or the newest segment's synced (read-only: loaded) prefix.
            var size: Int64
            /// Sealed and not the newest: it never changes again.
            var mayLink: Bool
            var hintPath: String?
        }
        var segments: [Segment]

        init(_ s: StoreState) {
            let newest = s.segments.keys.max()
            segments = s.segments.values.sorted { $0.id < $1.id }.map { file in
                let isNewest = file.id == newest || file.id == s.writer.id
                let size = file.id == s.writer.id && !s.options.isReadOnly ? s.writer.syncedSize : (s.usage[file.id]?.fileBytes ?? 0)
                let hint = s.hintBytes[file.id] != nil ? FileNames.join(s.directory, FileNames.hint(file.id)) : nil
                return Segment(file: file, size: size, mayLink: !isNewest, hintPath: hint)
            }
        }
    }

    /// Gives `copy` the permission bits of `source` (a hard link shares them already). A
    /// source deleted meanwhile (compaction) leaves the mode the copy was created with: the
    /// store's ``StoreOptions/permissions``.
    private static func keepMode(of source: String, on copy: String, fs: any CaskFileSystem) throws(CaskError) {
        let mode: UInt16?
        do throws(CaskError) { mode = try fs.permissions(of: source) } catch .io(_, _, ENOENT) { return }
        if let mode { try fs.setPermissions(mode, of: copy) }
    }

    /// Copies the first `bytes` bytes of a segment (through its open descriptor, so a segment
    /// deleted meanwhile still copies) into a new file, and syncs it.
    private static func copy(_ file: SegmentFile, bytes: Int64, to path: String, fs: any CaskFileSystem) throws(CaskError) {
        let out = try fs.open(path, mode: .createTruncate)
        defer { fs.close(out) }
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < bytes {
            let n = Int(min(Int64(chunk.count), bytes - offset))
            let complete = try chunk.withMutableBytes { raw throws(CaskError) in
                try fs.readExactly(file.handle, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<n]), at: offset)
            }
            guard complete else { throw .io(operation: "read", path: file.path, errno: EIO) }
            try chunk.withBytes { raw throws(CaskError) in try fs.appendAll(out, UnsafeRawBufferPointer(rebasing: raw[0..<n])) }
            offset += Int64(n)
        }
        try fs.sync(out)
    }

    /// Refuses a destination that is the store's folder or inside it (the copy would become
    /// part of the store it copies).
    private static func requireOutside(_ destination: String, of directory: String) throws(CaskError) {
        func absolute(_ path: String) -> String {
            let url = URL(fileURLWithPath: path).standardizedFileURL
            // Resolve links in the deepest part that exists (the destination itself may not).
            var existing = url, rest: [String] = []
            while !FileManager.default.fileExists(atPath: existing.path) && existing.path != "/" {
                rest.insert(existing.lastPathComponent, at: 0)
                existing.deleteLastPathComponent()
            }
            return rest.reduce(existing.resolvingSymlinksInPath().path) { ($0 as NSString).appendingPathComponent($1) }
        }
        let store = absolute(directory), target = absolute(destination)
        if target == store || target.hasPrefix(store.hasSuffix("/") ? store : store + "/") {
            throw .invalidOption("backup destination \(destination) is inside the store folder \(directory); give a folder outside it")
        }
    }

    private static func requireEmptyDestination(_ destination: String, fs: any CaskFileSystem) throws(CaskError) {
        do throws(CaskError) {
            let names = try fs.contentsOfDirectory(destination)
            guard names.isEmpty else {
                throw .invalidOption("backup destination \(destination) is not empty; give a new or empty folder")
            }
        } catch .io(_, _, ENOENT) {
            return
        } catch .io(_, _, ENOTDIR) {
            throw .invalidOption("backup destination \(destination) is a file, not a folder; give a new or empty folder")
        }
    }
}
