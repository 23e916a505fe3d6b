import CaskFormat
import Foundation

/// Checks every byte of a store directory without changing it: segment headers, every record's
/// checksum and LZ4 block, every hint file against its segment, and the index snapshot's
/// structure and checksum. Used by `cask verify`.
public struct StoreVerifier: Sendable {
    /// One problem found, with the file and byte offset where it starts.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var offset: Int64
        public var message: String
        /// Bytes the problem covers from `offset` (0 when it is not a byte range).
        public var length: Int64 = 0
        /// A hint file that passes its own checks but no longer matches its segment (the segment
        /// was damaged, cut or added to): recovery scans the segment and still uses the hint to
        /// know exactly which records it lost (format-spec.md, "Recovery on open", 7), so a
        /// repair keeps it; the repair's compaction rewrites the segment and drops the hint.
        public var guidesSalvage = false
        public var description: String { "\(file):\(offset): \(message)" }
    }

    /// What verification found.
    public struct Report: Sendable {
        public var segments = 0
        public var records = 0
        public var hintFiles = 0
        public var bytesChecked: Int64 = 0
        public var problems: [Problem] = []
        /// A damaged tail of the newest log segment: a torn write that the next open will cut.
        public var tornTail: Problem?
        /// Files the next open removes, which are not damage: hint files whose segment is gone
        /// (a compaction's output hint, momentarily, on a live store) and unfinished `*.tmp` files.
        public var leftovers: [String] = []
        /// Byte ranges whose reads kept failing (an I/O error such as EIO, after retries). Not
        /// damage: nothing is known of those bytes, and no open or read drops anything for them
        /// (it fails instead). Retry later; `cask verify --repair` gives up the records there.
        public var unreadable: [Problem] = []
        /// No problem and no unreadable range.
        public var isClean: Bool { problems.isEmpty && unreadable.isEmpty }
    }

    let directory: String
    /// Reads through a ``SalvagingFileSystem``: a failed read is noted as unreadable (and reads
    /// as zeros, whose damage is then not reported as such).
    let fs: SalvagingFileSystem
    /// The keys sealed values are opened with (nil: the store must hold none), bound to the
    /// store's id once ``verify(progress:)`` has read it.
    private(set) var keyring: Keyring?
    private let encryption: StoreEncryption?

    /// A verifier for the store in `directory`; `encryption` gives the keys of an encrypted
    /// store (its sealed values are opened to check them).
    public init(directory: String, fileSystem: any CaskFileSystem = POSIXFileSystem(), encryption: StoreEncryption? = nil) {
        self.directory = directory
        self.fs = SalvagingFileSystem(wrapping: fileSystem)
        self.keyring = encryption.map(Keyring.init)
        self.encryption = encryption
    }

    /// Verifies the store. `progress(done, total)` reports bytes as segments are read.
    ///
    /// A read that keeps failing (tried three times, then narrowed to 4 KiB pieces) is reported
    /// in ``Report/unreadable``, not as damage; the bytes around it are still checked.
    ///
    /// Reads only: nothing is created, locked or changed, so a store that a process has open
    /// (even one writing) can be checked. A segment that the writer's compaction deletes during
    /// the check is skipped (its records live on in the compaction's output); the writer's
    /// newest segment may end in a record being written, reported as ``Report/tornTail``.
    /// - Throws: ``CaskError/unsafePermissions(path:mode:)`` for a folder or file other users may
    ///   write, as an open does; ``CaskError/foreignFile(path:reason:)`` for a store file that is
    ///   a symbolic link or not a regular file;
    ///   ``CaskError/io(operation:path:errno:)`` when a file cannot be opened or listed;
    ///   ``CaskError/notACaskStore(file:)`` (also for a folder with no segment);
    ///   ``CaskError/unsupportedFormatVersion(file:found:supported:)``; and, as an open would
    ///   (format-spec.md, "Keys at open"), ``CaskError/encryptionKeyMissing(path:keyID:given:)``
    ///   for a segment sealed under a key the verifier was not given, and
    ///   ``CaskError/unencryptedStore(path:)`` for unsealed records when given keys; and
    ///   ``CaskError/storeIDUnusable(path:reason:)`` when given keys for a store whose id file
    ///   is damaged, or missing while a segment binds it (format-spec.md, "Store id").
    public func verify(progress: (Int64, Int64) -> Void = { _, _ in }) throws(CaskError) -> Report {
        try StoreFiles.requireExistingStore(directory, fs: fs)
        _ = try StorePermissionCheck.refuseWritableByOthers(directory, fs: fs)
        var bound = self
        var options = StoreOptions()
        options.isReadOnly = true
        options.fileSystem = fs
        options.encryption = encryption
        bound.keyring = keyring?.bound(to: try StoreIdentity.resolve(directory, options: options))
        return try bound.check(progress: progress)
    }

    private func check(progress: (Int64, Int64) -> Void) throws(CaskError) -> Report {
        let listing = try StoreDirectory(directory, fs: fs)
        var report = Report()
        let sizes = try segmentSizes(listing)
        let total = sizes.values.reduce(0, +)
        var scanned: [(id: UInt32, summary: SegmentScanner.Summary)] = []
        for id in listing.segmentIDs where sizes[id] != nil {
            if try isUnfinishedNewest(id, in: listing, size: sizes[id]!) {
                // As the open does (format-spec.md, "Recovery on open", step 2): a newest segment
                // no longer than a header, with a damaged one, was being created; it is removed.
                report.leftovers.append("\(listing.segmentPath(id)) (a segment being created when the writer stopped)")
                continue
            }
            do throws(CaskError) {
                scanned.append((id, try checkRecords(of: id, in: listing, into: &report)))
            } catch .io(_, _, ENOENT) {
                continue   // compacted away meanwhile
            }
            progress(report.bytesChecked, total)
        }
        let lastLogID = scanned.last(where: { StoreDirectory.isLog($0.summary.header) })?.id
        for (id, summary) in scanned {
            reportDamage(summary, path: listing.segmentPath(id), isLastLog: id == lastLogID, size: sizes[id], into: &report)
        }
        try checkHints(listing, sizes: sizes, into: &report)
        try checkSnapshot(listing, sizes: sizes, into: &report)
        setAsideUnreadable(in: &report)
        return report
    }

    /// Reports every unreadable range, and drops the problems inside files that had one where
    /// they overlap it (zeros read there fail their checks: that is not damage). A hint or
    /// snapshot with an unreadable range is not called damaged at all.
    private func setAsideUnreadable(in report: inout Report) {
        let ranges = fs.unreadable
        guard !ranges.isEmpty else { return }
        report.unreadable = ranges.map { Problem(file: $0.path, offset: $0.offset, message: "\($0.count) bytes could not be read (errno \($0.errno)): not damage, the device failed the read; check the disk and run cask verify again (cask verify --repair --give-up-unreadable gives up the records there)") }
        func explained(_ p: Problem, end: Int64) -> Bool {
            ranges.contains { r in
                r.path == p.file && (!p.file.hasSuffix(".cask") || (r.offset < end && p.offset < r.offset + Int64(r.count)))
            }
        }
        report.problems.removeAll { explained($0, end: $0.length > 0 ? $0.offset + $0.length : .max) }
        if let torn = report.tornTail, explained(torn, end: .max) { report.tornTail = nil }
    }

    private func segmentSizes(_ listing: StoreDirectory) throws(CaskError) -> [UInt32: Int64] {
        var sizes: [UInt32: Int64] = [:]
        for id in listing.segmentIDs {
            let h: CaskFileHandle
            do throws(CaskError) { h = try fs.open(listing.segmentPath(id), mode: .read) } catch .io(_, _, ENOENT) { continue }
            defer { fs.close(h) }
            sizes[id] = try fs.size(h)
        }
        return sizes
    }

    /// Whether segment `id` is the newest and holds at most a header that does not parse: what
    /// a crash during rollover leaves, and what an open removes.
    private func isUnfinishedNewest(_ id: UInt32, in listing: StoreDirectory, size: Int64) throws(CaskError) -> Bool {
        guard id == listing.segmentIDs.last, size <= Int64(Format.segmentHeaderSize) else { return false }
        let handle = try fs.open(listing.segmentPath(id), mode: .read)
        defer { fs.close(handle) }
        let bytes = try fs.readWholeFile(handle)
        if case .damaged = bytes.withUnsafeBytes({ SegmentHeader.parse($0) }) { return true }
        return false
    }

    /// What is wrong with a checksummed record's value: an LZ4 block that does not decode, or a
    /// cache entry whose value does not start with a valid entry header; nil when nothing is.
    private func valueProblem(_ h: RecordHeader, at offset: Int, in raw: UnsafeRawBufferPointer, segment: UInt32) -> String? {
        ValueCodec.problem(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + h.encodedSize)]), of: h, keyring: keyring, segment: segment)
    }

    /// Checks every record's checksum, LZ4 block and cache entry header in one segment.
    private func checkRecords(of id: UInt32, in listing: StoreDirectory, into report: inout Report) throws(CaskError) -> SegmentScanner.Summary {
        let path = listing.segmentPath(id)
        let handle = try fs.open(path, mode: .read)
        defer { fs.close(handle) }
        let bytes = try fs.readWholeFile(handle)
        if case .valid(let header) = bytes.withUnsafeBytes({ SegmentHeader.parse($0) }) {
            try EncryptionCheck.check(header, size: Int64(bytes.count), path: path, keyring: keyring)
        } else {
            try bytes.withBytes { raw throws(CaskError) in try EncryptionCheck.checkRecords(raw, path: path, keyring: keyring) }
        }
        var records = 0
        var problems: [Problem] = []
        let summary = try bytes.withBytes { raw throws(CaskError) in
            try SegmentScanner.scan(raw, file: path) { h, offset in
                records += 1
                if h.sequence == Format.maximumSequence {
                    problems.append(Problem(file: path, offset: Int64(offset), message: "record claims sequence number \(h.sequence), the last a writer may issue: a writing open refuses the store; \(StoreLoader.noSequenceLeft)"))
                }
                if h.isPin, let keyring, !keyring.authenticates(h, in: raw, at: offset, segmentID: id) {
                    problems.append(Problem(file: path, offset: Int64(offset), message: "pin record fails authentication (unsealed, under an unknown key, or changed); open does not apply it"))
                } else if let message = valueProblem(h, at: offset, in: raw, segment: id) {
                    problems.append(Problem(file: path, offset: Int64(offset), message: message))
                }
            }
        }
        report.segments += 1
        report.records += records
        report.bytesChecked += Int64(bytes.count)
        report.problems += problems
        if summary.headerDamaged {
            report.problems.append(Problem(file: path, offset: 0, message: "segment header is damaged"))
        }
        return summary
    }

    /// Damaged ranges as problems, except the newest log segment's torn tail, which the next
    /// open cuts (format-spec.md, "Recovery", step 6): damage there that valid records follow is
    /// a problem too (a write cut short leaves nothing valid after it; a recovery without the
    /// index snapshot would cut those records with it), which `--repair` removes.
    private func reportDamage(_ summary: SegmentScanner.Summary, path: String, isLastLog: Bool, size: Int64?, into report: inout Report) {
        if isLastLog, let first = summary.damage.first, !first.reachesEnd, StoreDirectory.tornTailStart(of: summary) != nil {
            let after = Int64(summary.validEnd) - Int64(first.end)
            report.problems.append(Problem(file: path, offset: Int64(first.start), message: "\(first.end - first.start) damaged bytes: \(first.reason), followed by \(after) bytes of valid records in the newest segment, which a recovery after a crash would cut with it; run cask verify --repair", length: Int64(first.end - first.start)))
            for d in summary.damage.dropFirst() {
                report.problems.append(Problem(file: path, offset: Int64(d.start), message: "\(d.end - d.start) damaged bytes: \(d.reason)", length: Int64(d.end - d.start)))
            }
            return
        }
        if isLastLog, let start = StoreDirectory.tornTailStart(of: summary), let first = summary.damage.first {
            report.tornTail = Problem(file: path, offset: Int64(start),
                                      message: "\((size ?? Int64(first.end)) - Int64(start)) bytes of torn tail: \(first.reason)")
            return
        }
        for d in summary.damage {
            report.problems.append(Problem(file: path, offset: Int64(d.start), message: "\(d.end - d.start) damaged bytes: \(d.reason)", length: Int64(d.end - d.start)))
        }
    }

    /// The index snapshot, when there is one: a damaged one (bad magic, counts that do not add
    /// up to its size, a checksum or end magic that fails) is a problem, and so is a segment
    /// shorter than the snapshot recorded; one of another snapshot version, or one whose segment
    /// marks no longer match the segments, is a leftover (the next open ignores it, and a
    /// writer's open deletes it).
    private func checkSnapshot(_ listing: StoreDirectory, sizes: [UInt32: Int64], into report: inout Report) throws(CaskError) {
        let path = FileNames.join(directory, IndexSnapshot.fileName)
        let handle: CaskFileHandle
        do throws(CaskError) { handle = try fs.open(path, mode: .read) } catch .io(_, _, ENOENT) { return }
        defer { fs.close(handle) }
        let bytes = try fs.readWholeFile(handle)
        report.bytesChecked += Int64(bytes.count)
        let minimum = IndexSnapshot.headerSize + IndexSnapshot.trailerSize
        let isOwnVersion = bytes.count >= 12 && bytes.withUnsafeBytes { $0.u32(8) } == IndexSnapshot.version
        if bytes.count >= 12, bytes.prefix(8).elementsEqual(IndexSnapshot.magic), !isOwnVersion {
            report.leftovers.append(path + " (index snapshot of another version, ignored)")
            return
        }
        var input = SnapshotInput(handle: handle, fs: fs)
        let header = try input.header()
        let problem: String? = bytes.withUnsafeBytes { raw -> String? in
            guard raw.count >= minimum, let header else { return "its header is damaged" }
            let sealSize = keyring == nil ? 0 : IndexSnapshot.Seal.size
            guard header.fileSize + sealSize == raw.count else { return "its counts make \(header.fileSize + sealSize) bytes, the file has \(raw.count)" }
            if let keyring, let problem = IndexSnapshot.Seal.problem(in: raw, header: header, keyring: keyring) { return problem }
            let end = raw.count - sealSize - IndexSnapshot.trailerSize
            guard raw.u32(end) == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[..<end]))),
                  raw.u32(end + 4) == IndexSnapshot.endMagic else { return "its checksum fails" }
            return nil
        }
        if let problem {
            report.problems.append(Problem(file: path, offset: 0, message: "index snapshot damaged (\(problem)); the next open ignores it and reads the hint files (a writer's open deletes it)"))
            return
        }
        guard let header, let marks = try input.marks(count: header.segments) else { return }
        // Segments only grow (by appends) or go away whole (compaction): one shorter than at
        // the last clean close lost its end, and the records that were there.
        for m in marks {
            if let size = sizes[m.id], size < m.size {
                report.problems.append(Problem(file: listing.segmentPath(m.id), offset: size, message: "segment is \(m.size - size) bytes shorter than at the last clean close (index snapshot): its end was cut, and the records there are lost"))
            }
        }
        let current = sizes.keys.sorted().map { (id: $0, size: sizes[$0]!) }
        if !marks.map({ $0.id }).elementsEqual(current.map(\.id)) || !marks.map({ $0.size }).elementsEqual(current.map(\.size)) {
            report.leftovers.append(path + " (index snapshot of other segments, ignored)")
        }
    }

    /// Every hint file against its segment, and hint files without one.
    private func checkHints(_ listing: StoreDirectory, sizes: [UInt32: Int64], into report: inout Report) throws(CaskError) {
        for id in listing.segmentIDs where listing.hintIDs.contains(id) && sizes[id] != nil {
            let path = listing.hintPath(id)
            let handle: CaskFileHandle
            do throws(CaskError) { handle = try fs.open(path, mode: .read) } catch .io(_, _, ENOENT) { continue }
            report.hintFiles += 1
            defer { fs.close(handle) }
            var bytes = try fs.readWholeFile(handle)
            if let problem = HintSeal.open(&bytes, keyring: keyring) {
                report.problems.append(Problem(file: path, offset: 0, message: "hint file not used (\(problem)); open will scan its segment"))
                continue
            }
            let failure = bytes.withUnsafeBytes { HintFile.parse($0, segmentID: UInt64(id), segmentSize: UInt64(sizes[id] ?? 0)) { _, _ in } }
            if case .invalid(let reason) = failure {
                let intact = bytes.withUnsafeBytes { raw in
                    HintFile.recordedSegmentSize(raw).map { HintFile.parse(raw, segmentID: UInt64(id), segmentSize: $0) { _, _ in } == nil } ?? false
                }
                let message = intact ? "hint file does not match its segment (\(reason)); open will scan its segment, and the hint tells which records it lost"
                                     : "hint file invalid (\(reason)); open will scan its segment"
                report.problems.append(Problem(file: path, offset: 0, message: message, guidesSalvage: intact))
            }
        }
        report.leftovers += listing.orphanHintIDs.map(listing.hintPath) + listing.temporaryNames.map { FileNames.join(directory, $0) }
    }
}
