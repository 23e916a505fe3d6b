import CaskFormat

/// What a pass reads: its input segments and the list of their records.
extension Compactor {
    /// One input segment: mapped when the file system maps files (by the segment's own mapping,
    /// or, when that is shorter than the sealed file, a mapping of its own), else read whole.
    struct Input {
        let file: SegmentFile
        let size: Int
        let bytes: [UInt8]?   // nil when mapped
        let ownMapping: InputMapping?
        let fs: any CaskFileSystem

        func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
            if let bytes { return try bytes.withBytes(body) }
            return try body(mapped)
        }
        private var mapped: UnsafeRawBufferPointer {
            if let ownMapping { return UnsafeRawBufferPointer(rebasing: ownMapping.bytes[0..<size]) }
            return file.mappedBytes(at: 0, count: size)!
        }
        /// Runs `body` with the key of a record listed from this input (no copy).
        func withKey<R>(of r: Kept, _ body: (UnsafeRawBufferPointer) -> R) -> R {
            func key(in raw: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
                let start = r.offset + Format.recordHeaderSize
                let length = Int(raw.u16(r.offset + Format.recordKeyLengthOffset))
                return UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
            }
            if let bytes { return bytes.withUnsafeBytes { body(key(in: $0)) } }
            return body(key(in: mapped))
        }
        /// For a tombstone: the newest sequence it hides (0 = unknown); for a pin record: the
        /// sequence of the value record it modifies (both in the header's expiry field).
        func hides(_ r: Kept) -> UInt64 {
            let at = r.offset + Format.recordExpiryOffset
            if let bytes { return bytes.withUnsafeBytes { $0.u64(at) } }
            return mapped.u64(at)
        }
        /// Lets the system take back the resident pages of `range` (mapped inputs only).
        func releasePages(_ range: Range<Int>) {
            guard bytes == nil else { return }
            fs.releasePages(UnsafeRawBufferPointer(rebasing: mapped[range.clamped(to: 0..<size)]))
        }

        /// The input of `file`, `size` bytes long.
        static func open(_ file: SegmentFile, size: Int, fs: any CaskFileSystem) throws(CaskError) -> Input {
            if file.mappedBytes(at: 0, count: size) != nil { return Input(file: file, size: size, bytes: nil, ownMapping: nil, fs: fs) }
            // The active segment was mapped for `segmentSize` bytes; its last record may end past that.
            if size > 0, let m = fs.mapReadOnly(file.handle, length: size) {
                return Input(file: file, size: size, bytes: nil, ownMapping: InputMapping(m, fs: fs), fs: fs)
            }
            return Input(file: file, size: size, bytes: try fs.readWholeFile(file.handle), ownMapping: nil, fs: fs)
        }
    }

    /// A mapping of an input made for one pass; unmapped when the pass lets go of it.
    // @unchecked: the mapping is read-only and immutable.
    final class InputMapping: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
        private let fs: any CaskFileSystem
        init(_ bytes: UnsafeRawBufferPointer, fs: any CaskFileSystem) { self.bytes = bytes; self.fs = fs }
        deinit { fs.unmap(bytes) }
    }

    /// A listed record, and then one chosen to survive: 32 bytes, for a pass lists every record
    /// of its inputs (a million and more). What else a step needs it reads from the record's
    /// header in the input (``Input/hides(_:)``, ``Input/withKey(of:_:)``).
    struct Kept {
        let sequence: UInt64
        /// Bits 0-47 the access time, 48-59 the input, 60-62 the kind: the list of a pass's
        /// records (one per record of its inputs) takes 24 bytes a record, not 32.
        private var packed: UInt64
        private let offset32: UInt32
        private let size32: UInt32

        private static let timeMask: UInt64 = (1 << 48) - 1

        init(sequence: UInt64, accessTime: Int64, input: Int, offset: Int, size: Int, isTombstone: Bool, isPin: Bool, isRemoval: Bool = false) {
            precondition(input < Compactor.maximumInputs, "a pass has at most \(Compactor.maximumInputs) inputs")
            self.sequence = sequence
            let kind: UInt64 = (isTombstone ? 1 : 0) | (isPin ? 2 : 0) | (isRemoval ? 4 : 0)
            packed = UInt64(input) << 48 | kind << 60
            offset32 = UInt32(offset)
            size32 = UInt32(size)
            self.accessTime = accessTime
        }

        /// The header's write time when listed; a live value's access time once chosen.
        /// Milliseconds since the Unix epoch, clamped to 0 ... 2^48 - 1 as the index keeps them.
        var accessTime: Int64 {
            get { Int64(packed & Self.timeMask) }
            set { packed = packed & ~Self.timeMask | UInt64(min(max(0, newValue), IndexEntry.maximumTime)) }
        }
        var input: Int { Int((packed >> 48) & 0xFFF) }
        var offset: Int { Int(offset32) }
        var size: Int { Int(size32) }
        private var kind: UInt64 { packed >> 60 }
        var isTombstone: Bool { kind & 1 != 0 }
        /// A pin record (kept only while it is its key's live pin record).
        var isPin: Bool { kind & 2 != 0 }
        /// A removal record (kept while an older record it removes may outlive the pass).
        var isRemoval: Bool { kind & 4 != 0 }
    }

    /// Keeps the pages a pass has read of its mapped inputs from piling up in resident memory.
    /// Each phase reads every input in offset order (records are in sequence order within a
    /// segment), so the pages below the last offset read are released every `step` bytes, and
    /// all of them when the phase ends. Reading a released page again costs a minor fault.
    struct InputResidency {
        private let inputs: [Input]
        private var releasedBelow: [Int]
        private let step = 4 << 20

        init(_ inputs: [Input]) {
            self.inputs = inputs
            releasedBelow = Array(repeating: 0, count: inputs.count)
        }
        /// Notes that the phase has read `input` up to `offset`.
        mutating func read(_ input: Int, upTo offset: Int) {
            guard offset - releasedBelow[input] >= step else { return }
            inputs[input].releasePages(releasedBelow[input]..<offset)
            releasedBelow[input] = offset
        }
        /// The phase is over: releases every page it read.
        mutating func endPhase() {
            for (n, input) in inputs.enumerated() { input.releasePages(0..<input.size); releasedBelow[n] = 0 }
        }
    }
}
