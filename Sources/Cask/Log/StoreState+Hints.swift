import CaskFormat

extension StoreState {
    /// Writes the index snapshot (on a clean close, after the active segment is synced), so
    /// that the next open loads the index from one file and access times survive without
    /// rewriting hint files. Returns false on failure, which is logged: open then reads the hint
    /// files instead. Also false, with nothing written, while a removal's walk of the index is
    /// under way (the index still holds items it removes; the next open applies the record).
    func writeSnapshot() -> Bool {
        guard sweeping.isEmpty else { return false }
        do throws(CaskError) {
            var marks: [IndexSnapshot.SegmentMark] = []
            for id in segments.keys.sorted() {
                guard let file = segments[id], let size = usage[id]?.fileBytes,
                      let tail = try IndexSnapshot.tailChecksum(of: file.handle, size: size, fs: fs) else { return false }
                marks.append(IndexSnapshot.SegmentMark(id: id, size: size, tailChecksum: tail))
            }
            try IndexSnapshot.write(index: index, pins: keys.pinRecords, maximumSequence: numbers.nextSequence - 1,
                                    marks: marks, in: directory, fs: fs, keyring: options.keyring)
            return true
        } catch {
            options.logger.warning("could not write the index snapshot of \(directory): \(error)")
            return false
        }
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
            try segmentSet.noteHint(of: activeID, bytes: StoreFiles.writeHint(hint, of: activeID, in: directory, keyring: options.keyring, fs: fs))
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
            let index = self.index
            guard let hint = try Self.scannedHint(of: segment, keyring: options.keyring, accessTime: { key, sequence in
                index.entry(forKey: key).flatMap { $0.sequence == sequence ? $0.accessTime : nil }
            }) else {
                options.logger.warning("not writing a hint for damaged segment \(segment.path)")
                return
            }
            try segmentSet.noteHint(of: id, bytes: StoreFiles.writeHint(hint, of: id, in: directory, keyring: options.keyring, fs: fs))
        } catch {
            stats.backgroundFailures += 1
            options.logger.warning("could not write the hint file of segment \(id): \(error)")
        }
    }

    /// The hint file of a sealed segment, made by scanning it (unsealed: see
    /// ``StoreFiles/writeHint(_:of:in:keyring:fs:)``); nil when the segment is damaged (with encryption on: or holds a pin record whose seal
    /// does not hold, which a hint must not vouch for). `accessTime(key, sequence)` gives a
    /// record's access time when the index knows a newer one than its write time.
    static func scannedHint(of segment: SegmentFile, keyring: Keyring?, accessTime: (UnsafeRawBufferPointer, UInt64) -> Int64?) throws(CaskError) -> [UInt8]? {
        let bytes = try segment.fileSystem.readWholeFile(segment.handle)
        var body: [UInt8] = []
        var count = 0
        var encoder = HintEntryEncoder()
        var forged = false
        let summary = try bytes.withBytes { raw throws(CaskError) in
            try SegmentScanner.scan(raw, file: segment.path) { h, offset in
                if h.isPin, let keyring, !keyring.authenticates(h, in: raw, at: offset, segmentID: segment.id) { forged = true }
                let keyBytes = UnsafeRawBufferPointer(rebasing: raw[(offset + Format.recordHeaderSize)..<(offset + Format.recordHeaderSize + h.keyLength)])
                encoder.append(HintEntry(
                    sequence: h.sequence, offset: UInt64(offset), writeTime: h.writeTime, expiry: h.expiry,
                    accessTime: accessTime(keyBytes, h.sequence) ?? h.writeTime, kind: h.kind, flags: h.flags,
                    keyLength: h.keyLength, storedLength: h.storedLength, originalLength: h.originalLength), key: keyBytes, to: &body)
                count += 1
            }
        }
        guard summary.damage.isEmpty, !forged else { return nil }
        return HintFile.encode(segmentID: UInt64(segment.id), segmentSize: UInt64(bytes.count), entryCount: count, body: body)
    }
}
