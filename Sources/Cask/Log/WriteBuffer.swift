/// The growable byte buffer records are encoded into before one `write(2)` hands many to the OS.
/// Owns its memory; the pointer never leaves this type except inside `with…` closures.
// @unchecked: only ever touched by the thread holding the owning store's mutex.
final class WriteBuffer: @unchecked Sendable {
    private var storage: UnsafeMutableRawPointer
    private(set) var capacity: Int
    /// Bytes in use.
    var count = 0
    private let preferredCapacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        self.preferredCapacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Appends `size` bytes written by `body` into the space it is given.
    @inline(__always)
    func append(size: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) {
        if count + size > capacity { grow(to: count + size) }
        body(UnsafeMutableRawBufferPointer(start: storage + count, count: size))
        count += size
    }

    private func grow(to needed: Int) {
        var c = capacity
        while c < needed { c *= 2 }
        let s = UnsafeMutableRawPointer.allocate(byteCount: c, alignment: 16)
        s.copyMemory(from: storage, byteCount: count)
        storage.deallocate()
        storage = s
        capacity = c
    }

    /// Empties the buffer, returning oversized memory (after a large value) to the system.
    func reset() {
        count = 0
        if capacity > 4 * preferredCapacity {
            storage.deallocate()
            storage = UnsafeMutableRawPointer.allocate(byteCount: preferredCapacity, alignment: 16)
            capacity = preferredCapacity
        }
    }

    /// Copies the first `count` bytes in use to the end of `other`.
    func copyPrefix(_ count: Int, to other: WriteBuffer) {
        other.append(size: count) { $0.copyMemory(from: UnsafeRawBufferPointer(start: storage, count: count)) }
    }

    /// The bytes in use.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }
}
