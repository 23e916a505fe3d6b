/// An array kept in chunks of a fixed power-of-two number of elements, so that growing it never
/// copies what it already holds: ``KeyIndex`` keeps its entries, expiries and key bytes in
/// these, and a put that adds the millionth key allocates one more chunk (whose pages the kernel
/// supplies as they are written) instead of copying 32 MB under the store's lock.
///
/// The first chunk is special: it fills by the usual doubling up to `1 << chunkShift` elements
/// (a small index stays small), or it is filled whole at its creation
/// (``init(unsafeUninitializedCount:chunkShift:initializingWith:)``: an index restored from a
/// snapshot is read straight into it). Every later chunk is allocated at `1 << chunkShift`
/// elements and never moves. Element `n` lies in the first chunk when `n < firstCapacity`, else
/// in chunk `1 + (n - firstCapacity) >> chunkShift`.
///
/// Reads are two loads (the chunk's address, then the element): no reference counting, no
/// exclusivity check, so threads may read one array at once. Value semantics: a copy shares the
/// chunks until either changes, and the one that changes then copies them all (as an `Array`
/// would). Not thread-safe for changes. Elements are plain bits (`BitwiseCopyable`).
struct ChunkedArray<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked: `store` is shared only between copies, which never change it (a change first
    // makes the store unique), so shared chunks are only read.
    private var store: ChunkStore<Element>
    /// `store.table`, kept here so that a read does not touch the store object.
    private var table: UnsafeMutablePointer<UnsafeMutablePointer<Element>>
    private let chunkShift: Int
    /// Elements the first chunk holds before the second starts.
    private let firstCapacity: Int
    /// The number of elements.
    private(set) var count = 0

    /// An empty array whose chunks hold `1 << chunkShift` elements.
    init(chunkShift: Int) {
        self.chunkShift = chunkShift
        self.firstCapacity = 1 << chunkShift
        self.store = ChunkStore(chunkCapacity: 1 << chunkShift)
        self.table = store.table
    }

    /// An array of `count` elements that `initialize` writes, all of them, into one first chunk
    /// of exactly that size; elements appended later go to chunks of `1 << chunkShift`.
    init<E: Error>(unsafeUninitializedCount count: Int, chunkShift: Int,
                   initializingWith initialize: (UnsafeMutableBufferPointer<Element>) throws(E) -> Void) throws(E) {
        self.chunkShift = chunkShift
        self.firstCapacity = max(count, 1)
        self.store = ChunkStore(chunkCapacity: 1 << chunkShift)
        store.addChunk(firstCapacity: firstCapacity)
        self.table = store.table
        try initialize(UnsafeMutableBufferPointer(start: table[0], count: count))
        self.count = count
    }

    /// `count` copies of `element`, in chunks of `1 << chunkShift`.
    init(repeating element: Element, count: Int, chunkShift: Int) {
        self.init(chunkShift: chunkShift)
        while self.count < count {
            let n = min(count - self.count, roomInLastChunk)
            append(repeating: element, count: n)
        }
    }

    var isEmpty: Bool { count == 0 }
    var indices: Range<Int> { 0..<count }

    /// Bytes the chunks hold (their capacities), for statistics.
    var memoryBytes: Int { store.allocatedElements * MemoryLayout<Element>.stride }

    /// The chunk and the position in it of element `n`.
    @inline(__always)
    private func place(_ n: Int) -> (chunk: Int, at: Int) {
        if n < firstCapacity { return (0, n) }
        let r = n - firstCapacity
        return (1 + r >> chunkShift, r & ((1 << chunkShift) - 1))
    }

    /// Elements chunk `c` holds when full.
    private func capacity(ofChunk c: Int) -> Int { c == 0 ? firstCapacity : 1 << chunkShift }

    /// Element `n` (`0 ..< count`).
    @inline(__always)
    subscript(n: Int) -> Element {
        get {
            precondition(n >= 0 && n < count, "index out of range")
            let p = place(n)
            return table[p.chunk][p.at]
        }
        set {
            precondition(n >= 0 && n < count, "index out of range")
            makeUnique()
            let p = place(n)
            table[p.chunk][p.at] = newValue
        }
    }

    /// Appends `element`: at most one allocation of a chunk, never a copy of the elements (but
    /// while the first chunk doubles, up to `1 << chunkShift` elements).
    mutating func append(_ element: Element) {
        let c = chunkForAppending()
        (table[c] + place(count).at).initialize(to: element)
        count += 1
    }

    /// Appends `elements`, which must fit in what is left of the current chunk
    /// (``roomInLastChunk``).
    mutating func append(contentsOf elements: UnsafeBufferPointer<Element>) {
        precondition(elements.count <= roomInLastChunk, "elements straddle a chunk of a ChunkedArray")
        guard let source = elements.baseAddress, !elements.isEmpty else { return }
        let c = chunkForAppending(reserving: elements.count)
        (table[c] + place(count).at).initialize(from: source, count: elements.count)
        count += elements.count
    }

    /// Appends `n` copies of `element`, which must fit in what is left of the current chunk.
    mutating func append(repeating element: Element, count n: Int) {
        precondition(n <= roomInLastChunk, "elements straddle a chunk of a ChunkedArray")
        guard n > 0 else { return }
        let c = chunkForAppending(reserving: n)
        (table[c] + place(count).at).initialize(repeating: element, count: n)
        count += n
    }

    /// Removes the last element. One emptied chunk is kept for the next appends (a store that
    /// adds and removes keys at a chunk's edge does not allocate a chunk each time).
    mutating func removeLast() {
        precondition(count > 0, "removeLast of an empty ChunkedArray")
        makeUnique()
        count -= 1
        let c = place(count).chunk
        if store.chunkCount > c + 2 { store.removeLastChunk() }
    }

    /// Frees the chunks after the one that holds the last element (the spare ``removeLast()``
    /// keeps): at most one chunk's room is then unused.
    mutating func releaseSpareChunks() {
        let used = count == 0 ? 0 : place(count - 1).chunk + 1
        guard store.chunkCount > used else { return }
        makeUnique()
        while store.chunkCount > max(used, 1) { store.removeLastChunk() }
    }

    /// Runs `body` on the elements `range`, which must lie in one chunk.
    @inline(__always)
    func withUnsafeBufferPointer<R>(in range: Range<Int>, _ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        let p = place(range.lowerBound)
        return try body(UnsafeBufferPointer(start: table[p.chunk] + p.at, count: range.count))
    }

    /// Runs `body` on the elements `range`, which must lie in one chunk, to change them.
    @inline(__always)
    mutating func withUnsafeMutableBufferPointer<R>(in range: Range<Int>, _ body: (UnsafeMutableBufferPointer<Element>) throws -> R) rethrows -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        makeUnique()
        let p = place(range.lowerBound)
        return try body(UnsafeMutableBufferPointer(start: table[p.chunk] + p.at, count: range.count))
    }

    /// How many elements can be appended before the current chunk is full (then the next
    /// append starts a new one).
    var roomInLastChunk: Int {
        let p = place(count)
        return capacity(ofChunk: p.chunk) - p.at
    }

    /// Makes the store this array's alone, copying it when a copy of the array shares it.
    @inline(__always)
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&store) {
            store = store.copy(elements: count, firstCapacity: firstCapacity)
            table = store.table
        }
    }

    /// The chunk the next `n` elements go to, with room for them: a new chunk after the first is
    /// allocated whole; the first doubles while it is smaller than `firstCapacity`.
    @inline(__always)
    private mutating func chunkForAppending(reserving n: Int = 1) -> Int {
        makeUnique()
        let p = place(count)
        if p.chunk == store.chunkCount {
            store.addChunk(firstCapacity: min(firstCapacity, max(16, n)))
        } else if p.chunk == 0 && p.at + n > store.firstAllocated {
            store.growFirstChunk(to: min(firstCapacity, max(store.firstAllocated * 2, p.at + n)), keeping: count)
        }
        table = store.table
        return p.chunk
    }
}

/// The memory of a ``ChunkedArray``'s chunks, and the table of their addresses: owns them,
/// frees them when the last array that uses it goes. Changed only by an array that holds it
/// alone.
final class ChunkStore<Element: BitwiseCopyable> {
    /// The chunks' addresses: `chunkCount` of `tableCapacity` places used.
    private(set) var table: UnsafeMutablePointer<UnsafeMutablePointer<Element>>
    private(set) var chunkCount = 0
    private var tableCapacity = 4
    /// Elements the first chunk has room for.
    private(set) var firstAllocated = 0
    /// Elements each later chunk has room for.
    private let chunkCapacity: Int

    init(chunkCapacity: Int) {
        self.chunkCapacity = chunkCapacity
        table = .allocate(capacity: tableCapacity)
    }

    deinit {
        for c in 0..<chunkCount { table[c].deallocate() }
        table.deallocate()
    }

    /// Elements all the chunks have room for.
    var allocatedElements: Int { chunkCount == 0 ? 0 : firstAllocated + (chunkCount - 1) * chunkCapacity }

    /// Adds a chunk: the first with room for `firstCapacity` elements, the others for `chunkCapacity`.
    func addChunk(firstCapacity: Int) {
        if chunkCount == tableCapacity {
            let larger = UnsafeMutablePointer<UnsafeMutablePointer<Element>>.allocate(capacity: tableCapacity * 2)
            larger.moveInitialize(from: table, count: chunkCount)
            table.deallocate()
            table = larger
            tableCapacity *= 2
        }
        let capacity = chunkCount == 0 ? firstCapacity : chunkCapacity
        (table + chunkCount).initialize(to: .allocate(capacity: capacity))
        if chunkCount == 0 { firstAllocated = capacity }
        chunkCount += 1
    }

    func removeLastChunk() {
        chunkCount -= 1
        table[chunkCount].deallocate()
        if chunkCount == 0 { firstAllocated = 0 }
    }

    /// Moves the first chunk's `count` elements to a chunk with room for `capacity`.
    func growFirstChunk(to capacity: Int, keeping count: Int) {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        larger.initialize(from: table[0], count: count)
        table[0].deallocate()
        table[0] = larger
        firstAllocated = capacity
    }

    /// A store of its own holding the same first `elements` elements (`firstCapacity` of them,
    /// at most, in the first chunk).
    func copy(elements: Int, firstCapacity: Int) -> ChunkStore {
        let copy = ChunkStore(chunkCapacity: chunkCapacity)
        var left = elements
        for c in 0..<chunkCount {
            copy.addChunk(firstCapacity: firstAllocated)
            let n = min(left, c == 0 ? firstCapacity : chunkCapacity)
            copy.table[c].initialize(from: table[c], count: n)
            left -= n
        }
        return copy
    }
}
