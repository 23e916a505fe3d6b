/// Checks every byte of a store directory without changing it: segment headers, every record's
/// checksum and LZ4 block, every hint file against its segment. Used by `cask verify`.
public struct StoreVerifier: Sendable {
    /// One problem found, with the file and byte offset where it starts.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var offset: Int64
        public var message: String
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
        public var isClean: Bool { problems.isEmpty }
    }

    let directory: String
    let fs: any CaskFileSystem

    /// A verifier for the store in `directory`.
    public init(directory: String, fileSystem: any CaskFileSystem = POSIXFileSystem()) {
        self.directory = directory
        self.fs = fileSystem
    }

    /// Verifies the store. `progress(done, total)` reports bytes as segments are read.
    /// - Throws: ``CaskError/io(operation:path:errno:)`` when a file cannot be read;
    ///   ``CaskError/storeLocked(path:ownerPID:)``, ``CaskError/notACaskStore(file:)`` and ``CaskError/unsupportedFormatVersion(file:found:supported:)``.
    /// The store's lock is held while it runs: a store open elsewhere gives
    /// ``CaskError/storeLocked(path:ownerPID:)``.
    public func verify(progress: (Int64, Int64) -> Void = { _, _ in }) throws(CaskError) -> Report {
        try StoreFiles.requireStoreDirectory(directory, fs: fs)
        let lock = try StoreLock.acquire(directory: directory, fs: fs)
        defer { lock.release() }
        var report = Report()
        let names = try fs.contentsOfDirectory(directory)
        let ids = names.compactMap { FileNames.id(in: $0, suffix: FileNames.segmentSuffix) }.sorted()
        let hinted = Set(names.compactMap { FileNames.id(in: $0, suffix: FileNames.hintSuffix) })
        var sizes: [UInt32: Int64] = [:]
        for id in ids {
            let h = try fs.open(FileNames.join(directory, FileNames.segment(id)), mode: .read)
            sizes[id] = try fs.size(h)
            fs.close(h)
        }
        let total = sizes.values.reduce(0, +)
        var lastLogID: UInt32?
        var scanned: [UInt32: SegmentScanner.Summary] = [:]
        for id in ids {
            let path = FileNames.join(directory, FileNames.segment(id))
            let handle = try fs.open(path, mode: .read)
            defer { fs.close(handle) }
            let bytes = try fs.readWholeFile(handle)
            var records = 0
            var problems: [Problem] = []
            let summary = try bytes.withBytes { raw throws(CaskError) in
                try SegmentScanner.scan(raw, file: path) { h, offset in
                    records += 1
                    if h.isCompressed {
                        let start = offset + Format.recordHeaderSize + h.keyLength
                        let stored = UnsafeRawBufferPointer(rebasing: raw[start..<(start + h.storedLength)])
                        var out = [UInt8](repeating: 0, count: h.originalLength)
                        if !out.withUnsafeMutableBytes({ Compression.decompress(stored, into: $0) }) {
                            problems.append(Problem(file: path, offset: Int64(offset), message: "LZ4 block does not decode to \(h.originalLength) bytes"))
                        }
                    }
                }
            }
            scanned[id] = summary
            if summary.header == nil || summary.header?.kind == .log { lastLogID = id }
            report.segments += 1
            report.records += records
            report.bytesChecked += Int64(bytes.count)
            report.problems += problems
            if summary.headerDamaged {
                report.problems.append(Problem(file: path, offset: 0, message: "segment header is damaged"))
            }
            progress(report.bytesChecked, total)
        }
        for (id, summary) in scanned.sorted(by: { $0.key < $1.key }) {
            let path = FileNames.join(directory, FileNames.segment(id))
            // In the newest log segment, the first damage starts the torn tail (format-spec.md,
            // recovery step 6): the next open cuts everything from there.
            if id == lastLogID, !summary.headerDamaged, let first = summary.damage.first {
                let size = sizes[id] ?? Int64(first.end)
                report.tornTail = Problem(file: path, offset: Int64(first.start),
                                          message: "\(size - Int64(first.start)) bytes of torn tail: \(first.reason)")
                continue
            }
            for d in summary.damage {
                report.problems.append(Problem(file: path, offset: Int64(d.start), message: "\(d.end - d.start) damaged bytes: \(d.reason)"))
            }
        }
        for id in ids where hinted.contains(id) {
            report.hintFiles += 1
            let path = FileNames.join(directory, FileNames.hint(id))
            let handle = try fs.open(path, mode: .read)
            defer { fs.close(handle) }
            let bytes = try fs.readWholeFile(handle)
            let failure = bytes.withUnsafeBytes { HintFile.parse($0, segmentID: UInt64(id), segmentSize: UInt64(sizes[id] ?? 0)) { _, _ in } }
            if case .invalid(let reason) = failure {
                report.problems.append(Problem(file: path, offset: 0, message: "hint file invalid (\(reason)); open will scan its segment"))
            }
        }
        for name in names where name.hasSuffix(FileNames.hintSuffix) {
            if let id = FileNames.id(in: name, suffix: FileNames.hintSuffix), sizes[id] == nil {
                report.problems.append(Problem(file: FileNames.join(directory, name), offset: 0, message: "hint file without a segment"))
            }
        }
        return report
    }
}
