import CaskFormat

extension DiskStore {
    /// Writes the hints the store has queued (``writeHints(_:)``) at close: those of segments
    /// sealed in the background since the last write. (The open hands the hints of segments it
    /// scanned to ``writeHints(_:)`` itself.)
    func writePendingHints() {
        let hints = state.withLock { $0.work.takeHints() }
        if !hints.isEmpty { writeHints(hints) }
    }

    /// Writes sealed segments' hint files on the background queue. A hint whose segment was
    /// compacted away meanwhile is removed again.
    func writeHints(_ hints: [PendingHint]) {
        hintQueue.async { [state, directory, options, closing] in
            for hint in hints {
                let id = hint.segment
                // A hint made by a scan is only a faster next open; a closing store skips it.
                if hint.entries == nil && closing.isCancelled { continue }
                do throws(CaskError) {
                    // A hint must not outlive its segment's records: written once they are
                    // durable (a failed sync is reported by the flush thread, which saw it first).
                    try hint.after?.sync()
                    var made = hint.encoded()
                    if made == nil, let file = hint.scanned {
                        // Outside the lock: a sealed segment does not change (nil when damaged).
                        made = try StoreState.scannedHint(of: file, keyring: options.keyring) { _, _ in nil }
                    }
                    guard let bytes = made else { continue }
                    let size = try StoreFiles.writeHint(bytes, of: id, in: directory, keyring: options.keyring, fs: options.fileSystem)
                    state.withLock { s in
                        if s.segments[id] != nil { s.segmentSet.noteHint(of: id, bytes: size) }
                        else { try? s.fs.remove(   // harmless: an orphan hint, which the next open removes
FileNames.join(directory, FileNames.hint(id))) }
                    }
                } catch {
                    state.noteBackgroundFailure("could not write the hint file of segment \(id)", error)
                }
            }
        }
    }
}
