import CaskFormat

extension StoreState {
    /// Rewrites the hint files of sealed segments read since their hint was written, with the
    /// access times the index holds (on a clean close). Failures are logged: stale access times
    /// only make LRU order fall back to older times.
    mutating func refreshAccessTimesInHints() {
        for id in segments.keys.sorted() where id != active.id && segments[id]!.wasRead {
            let path = FileNames.join(directory, FileNames.hint(id))
            guard let handle = try? fs.open(path, mode: .read) else { continue }
            defer { fs.close(handle) }
            guard let bytes = try? fs.readWholeFile(handle), let size = usage[id]?.fileBytes else { continue }
            var body: [UInt8] = []
            var count = 0
            let index = self.index
            let failure = bytes.withUnsafeBytes { raw in
                HintFile.parse(raw, segmentID: UInt64(id), segmentSize: UInt64(size)) { e, key in
                    var entry = e
                    if let current = index.entry(forKey: key), current.segment == id, UInt64(current.offset) == e.offset {
                        entry.accessTime = max(e.accessTime, current.accessTime)
                    }
                    HintFile.appendEntry(entry, key: key, to: &body)
                    count += 1
                }
            }
            guard failure == nil else { continue }
            let hint = HintFile.encode(segmentID: UInt64(id), segmentSize: UInt64(size), entryCount: count, body: body)
            do {
                try StoreFiles.writeAtomically(hint, to: FileNames.hint(id), in: directory, fs: fs)
            } catch {
                options.logger.warning("could not refresh access times in \(path): \(error)")
            }
        }
        for file in segments.values { file.wasRead = false }
    }

    /// Writes the active segment's hint file now (on a clean close), with current access times.
    mutating func writeActiveHint() {
        do {
            let index = self.index
            let activeID = active.id
            let hint = writer.hintFile { key, offset in
                guard let e = index.entry(forKey: key), e.segment == activeID, Int(e.offset) == offset else { return nil }
                return e.accessTime
            }
            try StoreFiles.writeAtomically(hint, to: FileNames.hint(active.id), in: directory, fs: fs)
            hintBytes[active.id] = Int64(hint.count)
        } catch {
            stats.backgroundFailures += 1
            options.logger.warning("could not write the hint file of segment \(active.id): \(error)")
        }
    }

    /// Writes the hint file of a sealed segment, logging (not throwing) on failure: a missing hint
    /// only means the segment is scanned at the next open.
    mutating func writeHint(for id: UInt32) {
        guard let segment = segments[id] else { return }
        do throws(CaskError) {
            let bytes = try fs.readWholeFile(segment.handle)
            var body: [UInt8] = []
            var count = 0
            let index = self.index
            let summary = try bytes.withBytes { raw throws(CaskError) in
                try SegmentScanner.scan(raw, file: segment.path) { h, offset in
                    let keyBytes = UnsafeRawBufferPointer(rebasing: raw[(offset + Format.recordHeaderSize)..<(offset + Format.recordHeaderSize + h.keyLength)])
                    var access = h.writeTime
                    if let e = index.entry(forKey: keyBytes), e.sequence == h.sequence { access = e.accessTime }
                    HintFile.appendEntry(HintEntry(
                        sequence: h.sequence, offset: UInt64(offset), writeTime: h.writeTime, expiry: h.expiry,
                        accessTime: access, kind: h.kind, flags: h.flags, keyLength: h.keyLength,
                        storedLength: h.storedLength, originalLength: h.originalLength), key: keyBytes, to: &body)
                    count += 1
                }
            }
            guard summary.damage.isEmpty else {
                options.logger.warning("not writing a hint for damaged segment \(segment.path)")
                return
            }
            let hint = HintFile.encode(segmentID: UInt64(id), segmentSize: UInt64(bytes.count), entryCount: count, body: body)
            try StoreFiles.writeAtomically(hint, to: FileNames.hint(id), in: directory, fs: fs)
            hintBytes[id] = Int64(hint.count)
        } catch {
            stats.backgroundFailures += 1
            options.logger.warning("could not write the hint file of segment \(id): \(error)")
        }
    }
}
