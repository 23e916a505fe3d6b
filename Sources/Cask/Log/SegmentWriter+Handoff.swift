/// Writing behind the lock: a full write buffer of the active segment goes to the flush thread,
/// which writes it outside the store's lock, while appends go on into the spare buffer
/// (format-spec.md, "Writing protocol"). One handoff at a time: while the flush thread writes
/// the last, the next buffer grows, up to ``maximumBufferFactor`` write buffers; only past that
/// does the appending thread write both itself.
extension SegmentWriter {
    /// Makes room for the next record: hands the full buffer to the flush thread when nothing
    /// else is handed off; lets it grow while something is (or while the gate is shut, up to
    /// ``maximumBufferFactor`` write buffers); else writes it here (``flush()``, which opens
    /// a shut gate first).
    mutating func makeRoom() throws(CaskError) {
        let mayGrow = buffer.count < bufferCapacity * Self.maximumBufferFactor
        if isGated { return mayGrow ? () : try flush() }
        if writesBehind { completeHandoffIfWritten() }
        if writesBehind && handoff != nil && !needsTruncate && mayGrow { return }
        guard writesBehind && handoff == nil && !needsTruncate else { return try flush() }
        handOffBuffer()
    }

    /// Makes the buffered bytes the handoff and continues in the spare buffer.
    private mutating func handOffBuffer() {
        handoff = Handoff(buffer: buffer, start: flushedSize, end: size)
        buffer = spare ?? WriteBuffer(capacity: bufferCapacity)
        spare = nil
    }

    /// Whether handed-off bytes wait for the flush thread.
    var hasPendingHandoff: Bool { handoff?.isPending ?? false }

    /// For the flush thread, under the lock: the handoff to write outside it, claimed (the
    /// buffer is handed off first when it holds bytes and nothing else is). Nil when there is
    /// nothing to write or a failed write must first be cut off (the next ``flush()`` does it).
    mutating func claimHandoff() -> Handoff? {
        guard writesBehind, !needsTruncate, !isGated else { return nil }
        completeHandoffIfWritten()
        if handoff == nil && buffer.count > 0 { handOffBuffer() }
        guard let h = handoff, h.claim() else { return nil }
        return h
    }

    /// Under the lock, after the flush thread wrote `h` (or failed to): makes its bytes flushed,
    /// or marks the file for cutting back to `flushedSize`. Nothing when `h` was settled already.
    mutating func finishHandoff(_ h: Handoff) {
        guard let current = handoff, current === h else { return }
        if h.isWritten { completeHandoffIfWritten() } else if h.hasFailed { needsTruncate = true }
    }

    /// Makes a written handoff's bytes flushed and keeps its buffer as the spare.
    mutating func completeHandoffIfWritten() {
        guard let h = handoff, h.isWritten else { return }
        complete(h)
    }

    /// Records `h`'s bytes as handed to the OS.
    private mutating func complete(_ h: Handoff) {
        flushedSize = h.end
        h.buffer.reset()
        spare = h.buffer
        handoff = nil
        startWritebackOfFlushedBytes()
    }

    /// Before anything is written under the lock: waits for the flush thread's write, or writes
    /// a handoff it has not claimed (or failed to write) here.
    mutating func settleHandoff() throws(CaskError) {
        guard let h = handoff else { return }
        h.waitForWrite()
        if h.isWritten { return completeHandoffIfWritten() }
        if h.hasFailed { needsTruncate = true }   // a partial write may lie past flushedSize
        if needsTruncate {
            try fs.truncate(file.handle, to: flushedSize)
            needsTruncate = false
        }
        let fs = self.fs, handle = file.handle
        do throws(CaskError) {
            try h.buffer.withBytes { bytes throws(CaskError) in try fs.appendAll(handle, bytes) }
        } catch {
            needsTruncate = true
            throw error
        }
        complete(h)
    }

    /// For ``undo(to:)`` to an offset before the buffer: settles the handoff without writing
    /// (waits for a claimed write; a written one completes), keeping its bytes before `offset`
    /// in the buffer when it was not written.
    mutating func dropHandoff(keepingUpTo offset: Int64) {
        guard let h = handoff else { return }
        h.waitForWrite()
        if h.isWritten { return completeHandoffIfWritten() }
        if h.hasFailed { needsTruncate = true }
        let kept = WriteBuffer(capacity: bufferCapacity)
        let keep = Int(max(0, min(offset, h.end) - h.start))
        if keep > 0 { h.buffer.copyPrefix(keep, to: kept) }
        buffer = kept
        handoff = nil
    }

    // MARK: The gate after a background seal

    /// How many write buffers' worth of records may wait in memory, behind a shut gate or while
    /// the flush thread writes the previous handoff, before a write does the work itself under
    /// the lock (syncs the sealed segment, or writes both buffers): 8.
    static let maximumBufferFactor = 8

    /// Whether the segment sealed before this one may not yet be durable: nothing of this one
    /// is written to its file until it is (format-spec.md, "Rollover").
    var isGated: Bool {
        guard let p = predecessor else { return false }
        return !p.isDurable
    }

    /// Makes the sealed predecessor durable (or waits for the thread doing it) and opens the
    /// gate. Throws the sync's error, which then stays: the gate never opens.
    mutating func openGate() throws(CaskError) {
        guard let p = predecessor else { return }
        try p.sync()
        predecessor = nil
    }
}
