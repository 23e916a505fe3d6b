import CaskFormat

extension SegmentScanner {
    /// ``scan(_:visit:)`` for the store: a file that is not a segment at all, or of a newer
    /// format version, becomes the ``CaskError`` that names `file` and the fix.
    static func scan(_ bytes: UnsafeRawBufferPointer, file: String, visit: (RecordHeader, Int) -> Void) throws(CaskError) -> Summary {
        do throws(Failure) {
            return try scan(bytes, visit: visit)
        } catch {
            switch error {
            case .notASegment: throw .notACaskStore(file: file)
            case .newerVersion(let found): throw .unsupportedFormatVersion(file: file, found: found, supported: Format.newestReadableVersion)
            }
        }
    }
}
