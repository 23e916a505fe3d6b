import CCaskSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A read of a memory-cache item not yet applied to its shard's LRU order: the node, the
/// cache-wide stamp and time (ms) of the use, and whether the use is recorded for
/// ``MemoryCache/takeUses()``.
@usableFromInline
struct BufferedUse {
    @usableFromInline var node: Int32
    @usableFromInline var isRecorded: Bool
    @usableFromInline var stamp: UInt64
    @usableFromInline var time: Int64

    @inlinable init(node: Int32, isRecorded: Bool, stamp: UInt64, time: Int64) {
        self.node = node
        self.isRecorded = isRecorded
        self.stamp = stamp
        self.time = time
    }
}

/// A ``BufferedUse`` as a stripe keeps it, in 16 bytes (a quarter of a cache line): the time as
/// milliseconds after the stripe's base time, a recorded use as the node's complement.
@usableFromInline
struct PackedUse {
    @usableFromInline var stamp: UInt64
    @usableFromInline var node: Int32
    @usableFromInline var timeOffset: UInt32

    @inlinable init(stamp: UInt64, node: Int32, timeOffset: UInt32) {
        self.stamp = stamp
        self.node = node
        self.timeOffset = timeOffset
    }
}

/// The locks of one memory-cache shard: one per CPU (a power of two of them, at most 16), each
/// on cache lines of its own with a buffer of the reads made under it.
///
/// A read takes only its CPU's stripe, so reads on different CPUs write no shared cache line:
/// the list is only read, and the use goes into the stripe's buffer. A write takes every stripe
/// (in order), so it excludes every read, and first applies the buffered uses
/// (``MemoryShard/withLock(_:)``). Owns the raw memory of the locks and buffers.
///
/// The locks are spin locks on `Synchronization.Atomic` words (acquire on lock, release on
/// unlock, so ThreadSanitizer sees them): a glibc mutex costs a third more per uncontended read,
/// and a plain one puts a reader to sleep in the kernel whenever a write applies the buffered
/// uses (two threads then ran at 0.7-0.9 times one thread's rate, measured with memory-versus).
/// Each stripe is one block: its lock word, count and base time on the first cache line, its
/// buffer after.
@usableFromInline
struct ReadStripes: ~Copyable {
    /// Uses a stripe buffers before the next read must take the write lock to apply them.
    @usableFromInline static let capacity = 32
    @usableFromInline static let countOffset = 48
    @usableFromInline static let baseTimeOffset = 56
    @usableFromInline static let bufferOffset = 64
    /// Bytes from one stripe to the next (a whole number of cache lines).
    @usableFromInline static let stride = (bufferOffset + capacity * MemoryLayout<PackedUse>.stride + 63) & ~63

    @usableFromInline let count: Int
    @usableFromInline let mask: Int
    @usableFromInline let base: UnsafeMutableRawPointer

    /// Stripes for the machine's CPUs (rounded up to a power of two, 1 ... 16).
    @usableFromInline init() {
        let cpus = max(1, min(16, sysconf(Int32(_SC_NPROCESSORS_CONF))))
        var n = 1
        while n < cpus { n *= 2 }
        count = n
        mask = n - 1
        base = .allocate(byteCount: n * Self.stride, alignment: 64)
        for s in 0..<n {
            (base + s * Self.stride).bindMemory(to: Atomic<UInt32>.self, capacity: 1).initialize(to: Atomic<UInt32>(0))
            (base + s * Self.stride + Self.countOffset).storeBytes(of: 0, as: Int.self)
            (base + s * Self.stride + Self.bufferOffset).bindMemory(to: PackedUse.self, capacity: Self.capacity)
        }
    }

    deinit {
        for s in 0..<count { lockWord(s).deinitialize(count: 1) }
        base.deallocate()
    }

    /// Stripe `s`'s lock: 0 free, 1 held.
    @inlinable @inline(__always)
    func lockWord(_ s: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
        (base + s * Self.stride).assumingMemoryBound(to: Atomic<UInt32>.self)
    }

    /// Takes stripe `s`'s lock: one compare-and-swap when it is free, else ``wait(for:)``.
    @inlinable @inline(__always)
    func lock(_ s: Int) {
        if !lockWord(s).pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { wait(for: s) }
    }

    @inlinable @inline(__always)
    func unlock(_ s: Int) { lockWord(s).pointee.store(0, ordering: .releasing) }

    /// Spins until stripe `s`'s lock is free and takes it; after a few hundred tries, yields the
    /// CPU between tries (its holder may be a thread that is not running). Locks are held for
    /// a lookup, or for applying a few dozen buffered uses: about a microsecond at most.
    @usableFromInline @inline(never)
    func wait(for s: Int) {
        var tries = 0
        while true {
            if lockWord(s).pointee.load(ordering: .relaxed) == 0,
               lockWord(s).pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
            tries += 1
            if tries < 256 { cask_spin_pause() } else { sched_yield() }
        }
    }

    /// Uses buffered in stripe `s`.
    @inlinable @inline(__always)
    func used(_ s: Int) -> Int { (base + s * Self.stride + Self.countOffset).load(as: Int.self) }

    @inlinable @inline(__always)
    func setUsed(_ n: Int, _ s: Int) { (base + s * Self.stride + Self.countOffset).storeBytes(of: n, as: Int.self) }

    /// The time (ms) the offsets of stripe `s`'s uses count from: its first buffered use's.
    @inlinable @inline(__always)
    func baseTime(_ s: Int) -> Int64 { (base + s * Self.stride + Self.baseTimeOffset).load(as: Int64.self) }

    @inlinable @inline(__always)
    func buffer(_ s: Int) -> UnsafeMutablePointer<PackedUse> {
        (base + s * Self.stride + Self.bufferOffset).assumingMemoryBound(to: PackedUse.self)
    }

    // MARK: Reads

    /// Locks the calling CPU's stripe and returns it (for ``unlockRead(_:)``).
    @inlinable @inline(__always)
    func lockRead() -> Int {
        let s = count == 1 ? 0 : Int(cask_current_cpu()) & mask
        lock(s)
        return s
    }

    @inlinable @inline(__always)
    func unlockRead(_ s: Int) { unlock(s) }

    /// Whether stripe `s` (locked by the caller) can buffer one more use, at `time` (no
    /// further than 2^32 ms from the base time, and not before it: a clock may go back).
    @inlinable @inline(__always)
    func hasRoom(_ s: Int, at time: Int64) -> Bool {
        let n = used(s)
        return n == 0 || (n < Self.capacity && UInt64(bitPattern: time &- baseTime(s)) <= UInt64(UInt32.max))
    }

    /// Buffers `use` in stripe `s` (locked by the caller, with room at `use.time`).
    @inlinable @inline(__always)
    func append(_ use: BufferedUse, to s: Int) {
        let n = used(s)
        if n == 0 { (base + s * Self.stride + Self.baseTimeOffset).storeBytes(of: use.time, as: Int64.self) }
        let offset = UInt32(truncatingIfNeeded: use.time &- baseTime(s))
        (buffer(s) + n).initialize(to: PackedUse(stamp: use.stamp, node: use.isRecorded ? ~use.node : use.node, timeOffset: offset))
        setUsed(n + 1, s)
    }

    /// Use `n` of stripe `s`, unpacked.
    @inlinable @inline(__always)
    func use(_ n: Int, of s: Int) -> BufferedUse {
        let packed = buffer(s)[n]
        return BufferedUse(node: packed.node < 0 ? ~packed.node : packed.node, isRecorded: packed.node < 0,
                           stamp: packed.stamp, time: baseTime(s) &+ Int64(packed.timeOffset))
    }

    // MARK: Writes

    /// Locks every stripe, in order.
    @inlinable @inline(__always)
    func lockAll() {
        for s in 0..<count { lock(s) }
    }

    @inlinable @inline(__always)
    func unlockAll() {
        for s in 0..<count { unlock(s) }
    }

    /// Whether any stripe holds a use (every stripe locked by the caller).
    @inlinable @inline(__always)
    var isEmpty: Bool {
        for s in 0..<count where used(s) != 0 { return false }
        return true
    }

    /// Calls `body` with every buffered use, oldest stamp first, then empties the buffers
    /// (every stripe locked by the caller). Each stripe's uses are already in stamp order
    /// (stamped under its lock), so this merges them: O(uses × stripes), no sort.
    @inlinable
    func drain(_ body: (BufferedUse) -> Void) {
        var only = -1
        for s in 0..<count where used(s) != 0 {
            if only >= 0 { only = -2; break }
            only = s
        }
        if only >= 0 {
            for n in 0..<used(only) { body(use(n, of: only)) }
        } else if only == -2 {
            withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { next in
                next.initialize(repeating: 0)
                while true {
                    var best = -1
                    var bestStamp = UInt64.max
                    for s in 0..<count where next[s] < used(s) {
                        let stamp = buffer(s)[next[s]].stamp
                        if best < 0 || stamp < bestStamp { best = s; bestStamp = stamp }
                    }
                    guard best >= 0 else { break }
                    body(use(next[best], of: best))
                    next[best] += 1
                }
            }
        }
        for s in 0..<count { setUsed(0, s) }
    }
}
