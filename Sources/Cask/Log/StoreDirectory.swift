import CaskFormat

/// The files of a store directory, classified by name (format-spec.md, "Directory layout"), and
/// the recovery rules that depend only on which files exist. One reading shared by the loader and
/// the verifier, so both apply the same rules.
struct StoreDirectory {
    let path: String
    /// Every entry's name.
    let names: [String]
    /// Ids of the segment files, ascending.
    let segmentIDs: [UInt32]
    /// Ids of the hint files.
    let hintIDs: Set<UInt32>

    /// Lists `path`.
    init(_ path: String, fs: any CaskFileSystem) throws(CaskError) {
        self.path = path
        names = try fs.contentsOfDirectory(path)
        segmentIDs = names.compactMap { FileNames.id(in: $0, suffix: FileNames.segmentSuffix) }.sorted()
        hintIDs = Set(names.compactMap { FileNames.id(in: $0, suffix: FileNames.hintSuffix) })
    }

    /// Unfinished hint files and compaction outputs (`*.tmp`): open deletes them.
    var temporaryNames: [String] { names.filter { $0.hasSuffix(FileNames.temporarySuffix) } }
    /// Hint files whose segment is gone (compacted away): open deletes them.
    var orphanHintIDs: [UInt32] { hintIDs.subtracting(segmentIDs).sorted() }

    func segmentPath(_ id: UInt32) -> String { FileNames.join(path, FileNames.segment(id)) }
    func hintPath(_ id: UInt32) -> String { FileNames.join(path, FileNames.hint(id)) }

    /// Whether a segment with this header counts as a log segment for the torn-tail rule: a
    /// damaged header might be a log segment's, so it counts.
    static func isLog(_ header: SegmentHeader?) -> Bool { header == nil || header?.kind == .log }

    /// Where the torn tail of the newest log segment starts (format-spec.md, "Recovery", step 6):
    /// at its first damaged byte, unless its header is damaged (then nothing is a tail). Only
    /// that segment can hold unsynced bytes: each segment is synced before the next is created,
    /// and a crash can persist unsynced pages out of order, so valid records after damage there
    /// were never acknowledged as durable.
    static func tornTailStart(of summary: SegmentScanner.Summary) -> Int? {
        guard !summary.headerDamaged else { return nil }
        return summary.damage.first?.start
    }
}
