/// The store's open segment files and what each holds: file and live bytes, live entries, the
/// lowest sequence number, its hint file's size, and the inputs a compaction switched out but
/// has not yet unlinked. A value kept in ``StoreState``, changed only under the store's lock and
/// only through ``apply(_:)`` and the accounting methods below.
///
/// Invariants (``invariantViolation()``): every segment with a file has a usage and the other
/// way round; live bytes and entries are never negative; a segment's live bytes fit in its file
/// (the active one's count bytes still in the write buffer); hint sizes are kept only for open
/// segments; the running totals (``segmentFileBytes``, ``hintFileBytes``, ``deletionBytes``) are
/// the sums they stand for, so that a put reads the disk use in O(1).
struct SegmentSet: Sendable {
    /// Open segment files by id.
    private(set) var files: [UInt32: SegmentFile] = [:]
    /// Each open segment's usage.
    private(set) var usage = SegmentUsages()
    /// Sizes of the hint files of open segments that have one.
    private(set) var hintBytes: [UInt32: Int64] = [:]
    /// Compaction inputs switched out but not yet unlinked: their segment and hint bytes.
    private(set) var bytesAwaitingDeletion: [UInt32: Int64] = [:]
    /// After a compaction failed to delete its inputs (or its output): the lowest sequence they
    /// may hold. They could reappear after a crash, so tombstones above it are kept.
    private(set) var lingeringMinimumSequence: UInt64 = .max
    /// Σ of the open segments' file bytes.
    private(set) var segmentFileBytes: Int64 = 0
    /// Σ of the open segments' hint file bytes.
    private(set) var hintFileBytes: Int64 = 0
    /// Σ of ``bytesAwaitingDeletion``.
    private(set) var deletionBytes: Int64 = 0

    /// A change to the set, applied at once under the lock.
    enum Edit {
        /// A segment joins: a new log segment, one recovery kept, or a compaction's output.
        case add(SegmentFile, usage: SegmentUsage, hintBytes: Int64?)
        /// Compaction switched out these inputs: forgotten, their bytes counted until unlinked.
        case retire([UInt32])
        /// The compaction output `id` keeps `bytes` of tombstones and removal records it could
        /// not drop while older segments reached down to sequence `until`
        /// (``SegmentUsage/settledDeadBytes``).
        case settle(UInt32, bytes: Int64, until: UInt64)
        /// The retired segment `id` was unlinked (or given up): no longer counted.
        case unlinked(UInt32)
        /// Records as old as this sequence number may come back after a crash (a failed delete).
        case lingering(minimumSequence: UInt64)
        /// Everything but `keeping` goes (``DiskStore/removeAll()``: it cleared every older one).
        case clear(keeping: UInt32)
        /// The store closed: no segment is open any more.
        case close
    }

    mutating func apply(_ edit: Edit) {
        switch edit {
        case let .add(file, usage, hint):
            files[file.id] = file
            segmentFileBytes += usage.fileBytes - (self.usage[file.id]?.fileBytes ?? 0)
            self.usage[file.id] = usage
            setHint(of: file.id, to: hint)
        case .retire(let ids):
            for id in ids {
                let bytes = (usage[id]?.fileBytes ?? 0) + (hintBytes[id] ?? 0)
                deletionBytes += bytes - (bytesAwaitingDeletion[id] ?? 0)
                bytesAwaitingDeletion[id] = bytes
                files[id] = nil
                segmentFileBytes -= usage[id]?.fileBytes ?? 0
                usage[id] = nil
                setHint(of: id, to: nil)
            }
        case let .settle(id, bytes, until):
            usage[id]?.settledDeadBytes = bytes
            usage[id]?.settledUntil = until
        case .unlinked(let id):
            deletionBytes -= bytesAwaitingDeletion.removeValue(forKey: id) ?? 0
        case .lingering(let sequence):
            lingeringMinimumSequence = min(lingeringMinimumSequence, sequence)
        case .clear(let keeping):
            files = files.filter { $0.key == keeping }
            usage = usage[keeping].map { [keeping: $0] } ?? [:]
            hintBytes = [:]
            segmentFileBytes = usage[keeping]?.fileBytes ?? 0
            hintFileBytes = 0
        case .close:
            files = [:]
        }
    }

    /// Sets (nil: forgets) the size of segment `id`'s hint file, keeping the total.
    private mutating func setHint(of id: UInt32, to bytes: Int64?) {
        hintFileBytes += (bytes ?? 0) - (hintBytes[id] ?? 0)
        hintBytes[id] = bytes
    }

    // MARK: Accounting

    /// `bytes` (and `entries`) of segment `id` became live (negative: no longer live).
    @inline(__always)
    mutating func addLive(_ bytes: Int64, entries: Int = 0, in id: UInt32) {
        usage.update(id) { $0.liveBytes += bytes; $0.liveCount += entries }
    }

    /// `bytes` of live records moved from segment `from` to their copies in `to` (compaction).
    mutating func moveLive(_ bytes: Int64, entries: Int, from: UInt32, to: UInt32) {
        addLive(-bytes, entries: -entries, in: from)
        addLive(bytes, entries: entries, in: to)
    }

    /// Segment `id`'s file grew by `bytes` (a record appended; negative: an append undone).
    @inline(__always)
    mutating func grow(_ id: UInt32, by bytes: Int64) {
        usage[id, default: SegmentUsage(fileBytes: 0, liveBytes: 0)].fileBytes += bytes
        segmentFileBytes += bytes
    }

    /// Segment `id`'s hint file was written (`bytes` long); ignored when it is no longer open.
    mutating func noteHint(of id: UInt32, bytes: Int64) {
        guard files[id] != nil else { return }
        setHint(of: id, to: bytes)
    }

    /// What recovery learnt of segment `id`: its header is damaged (compaction rewrites it
    /// first), or its records start at `minimumSequence`.
    mutating func noteRecovered(_ id: UInt32, headerDamaged: Bool = false, minimumSequence: UInt64? = nil) {
        usage.update(id) { u in
            if headerDamaged { u.headerDamaged = true }
            if let minimumSequence { u.minimumSequence = minimumSequence }
        }
    }

    // MARK: Reading

    /// Bytes of all segment and hint files, compaction inputs not yet unlinked included (the
    /// byte limit's back-pressure counts what is on disk).
    var fileBytes: Int64 { segmentFileBytes + hintFileBytes + deletionBytes }

    /// Bytes of the live records, summed over the segments.
    var liveBytes: Int64 { usage.values.reduce(0) { $0 + $1.liveBytes } }

    /// The first invariant above that does not hold, or nil.
    func invariantViolation() -> String? {
        if Set(files.keys) != Set(usage.keys) { return "segment files \(files.keys.sorted()), usages \(usage.keys)" }
        if let id = hintBytes.keys.first(where: { files[$0] == nil }) { return "a hint size is kept for segment \(id), which is not open" }
        let sums = (usage.values.reduce(0) { $0 + $1.fileBytes }, hintBytes.values.reduce(0, +), bytesAwaitingDeletion.values.reduce(0, +))
        if sums != (segmentFileBytes, hintFileBytes, deletionBytes) {
            return "totals \((segmentFileBytes, hintFileBytes, deletionBytes)), the segments add up to \(sums)"
        }
        for (id, u) in usage where u.liveBytes < 0 || u.liveCount < 0 || u.liveBytes > max(u.fileBytes, 0) {
            return "segment \(id): \(u.liveBytes) live bytes in \(u.liveCount) entries, file \(u.fileBytes) bytes"
        }
        return nil
    }
}
