/// Each segment's usage (``SegmentUsage``) by segment id: a map with a `Dictionary`'s API, kept as
/// two arrays sorted by id. A store has tens to hundreds of segments, and every put and remove
/// changes one or two entries: a binary search over a few cache lines, where a `Dictionary` paid a
/// hash and a heap-allocated `_modify` coroutine frame per change (about a third of a put's
/// instructions, measured with callgrind). Not thread-safe: part of ``StoreState``.
struct SegmentUsages: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    private(set) var keys: [UInt32] = []
    private(set) var values: [SegmentUsage] = []

    init() {}

    init(dictionaryLiteral elements: (UInt32, SegmentUsage)...) {
        for (id, usage) in elements { self[id] = usage }
    }

    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }

    /// The position of `id`, or where it would be inserted.
    @inline(__always)
    private func position(of id: UInt32) -> (Int, found: Bool) {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < id { low = mid + 1 } else { high = mid }
        }
        return (low, low < keys.count && keys[low] == id)
    }

    subscript(id: UInt32) -> SegmentUsage? {
        @inline(__always) get {
            let (i, found) = position(of: id)
            return found ? values[i] : nil
        }
        set {
            let (i, found) = position(of: id)
            switch (found, newValue) {
            case (true, let value?): values[i] = value
            case (true, nil): keys.remove(at: i); values.remove(at: i)
            case (false, let value?): keys.insert(id, at: i); values.insert(value, at: i)
            case (false, nil): break
            }
        }
    }

    subscript(id: UInt32, default fallback: @autoclosure () -> SegmentUsage) -> SegmentUsage {
        get { self[id] ?? fallback() }
        set { self[id] = newValue }
    }

    /// Changes the usage of `id` in place (nothing when absent).
    @inline(__always)
    mutating func update(_ id: UInt32, _ body: (inout SegmentUsage) -> Void) {
        let (i, found) = position(of: id)
        if found { body(&values[i]) }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let usages: SegmentUsages
        fileprivate var position = 0
        mutating func next() -> (key: UInt32, value: SegmentUsage)? {
            guard position < usages.keys.count else { return nil }
            defer { position += 1 }
            return (usages.keys[position], usages.values[position])
        }
    }

    func makeIterator() -> Iterator { Iterator(usages: self) }
}
