import Foundation

/// The disk layer's queries, trims and maintenance, on the cache itself: what a user of the
/// facade needs without reaching through ``CaskCache/disk``. Items a trim or removal takes from
/// the disk layer leave the memory layer too (a memory copy never outlives its record).
extension CaskCache {
    // MARK: Queries

    /// The keys of every live item, in no particular order (the disk layer holds every item; the
    /// memory layer a subset). O(n); thread-safe.
    public func keys() -> [String] { disk.keys() }

    /// Live items (the disk layer's count, expired items not yet swept included).
    public var count: Int { disk.count }

    // MARK: Trims

    /// Removes items not read or written since `date`; pinned items stay. Returns how many.
    ///
    /// - Throws: what ``DiskStore/trim(toDate:)`` throws.
    @discardableResult
    public func trim(toDate date: Date) throws(CaskError) -> Int {
        try changingDisk { () throws(CaskError) in try disk.trim(toDate: date) }
    }

    /// Evicts least recently used items until the disk layer's live records take at most `bytes`
    /// (unpinned first).
    /// - Throws: what ``DiskStore/trim(toSize:)`` throws.
    public func trim(toSize bytes: Int) throws(CaskError) {
        try changingDisk { () throws(CaskError) in try disk.trim(toSize: bytes) }
    }

    /// Evicts the largest items first until live records take at most `bytes` (unpinned first).
    ///
    /// - Throws: what ``DiskStore/trimLargestFirst(toSize:)`` throws.
    public func trimLargestFirst(toSize bytes: Int) throws(CaskError) {
        try changingDisk { () throws(CaskError) in try disk.trimLargestFirst(toSize: bytes) }
    }

    /// Evicts least recently used items until at most `count` remain (unpinned first).
    ///
    /// - Throws: what ``DiskStore/trim(toCount:)`` throws.
    public func trim(toCount count: Int) throws(CaskError) {
        try changingDisk { () throws(CaskError) in try disk.trim(toCount: count) }
    }

    /// Removes every item whose time to live ran out or that is past the age limit. Returns how
    /// many.
    /// - Throws: what ``DiskStore/removeExpired()`` throws.
    @discardableResult
    public func removeExpired() throws(CaskError) -> Int {
        try changingDisk { () throws(CaskError) in try disk.removeExpired() }
    }

    /// Removes every pinned item (`pinned: true`) or every unpinned one (`pinned: false`), from
    /// both layers. Returns how many.
    /// - Throws: what ``DiskStore/removeAll(pinned:)`` throws.
    @discardableResult
    public func removeAll(pinned: Bool) throws(CaskError) -> Int {
        try changingDisk { () throws(CaskError) in try disk.removeAll(pinned: pinned) }
    }

    /// Removes every item whose key starts with `prefix` that was written before the call,
    /// and none written after, from both layers (``DiskStore/removeValues(withPrefix:)``:
    /// durable before anything is removed, whatever the durability mode; each memory copy goes
    /// with its record). Returns how many live items were removed. No ``CacheEvent`` is sent per
    /// key (the disk layer's ``StoreOptions/eventHandler`` gets ``StoreEvent/removed(key:)`` for each).
    /// - Throws: what ``DiskStore/removeValues(withPrefix:)`` throws; nothing is removed then.
    @discardableResult
    public func removeValues(withPrefix prefix: String) throws(CaskError) -> Int {
        let removed = try removeLocally(withPrefix: prefix)
        if let shared { try shared.send(.removePrefix(prefix, version: shared.nextVersion())) }
        return removed
    }

    /// ``removeValues(withPrefix:)`` in this node's layers only.
    func removeLocally(withPrefix prefix: String) throws(CaskError) -> Int {
        try changingDisk { () throws(CaskError) in try disk.removeValues(withPrefix: prefix) }
    }

    /// Removes every entry stored with `tag` in its ``CacheEntryOptions/tags`` before the call,
    /// and none stored after, from both layers (``DiskStore/removeValues(taggedWith:)``:
    /// durable before anything is removed, whatever the durability mode; each memory copy goes
    /// with its record). Values stored with `setValue(_:forKey:timeToLive:isPinned:)` have
    /// no tags. Returns how many live items were removed. No ``CacheEvent`` is sent per key.
    /// - Throws: what ``DiskStore/removeValues(taggedWith:)`` throws.
    @discardableResult
    public func removeValues(taggedWith tag: String) throws(CaskError) -> Int {
        let removed = try removeLocally(taggedWith: tag)
        if let shared { try shared.send(.removeTag(tag, version: shared.nextVersion())) }
        return removed
    }

    /// ``removeValues(taggedWith:)`` in this node's layers only.
    func removeLocally(taggedWith tag: String) throws(CaskError) -> Int {
        try changingDisk { () throws(CaskError) in try disk.removeValues(taggedWith: tag) }
    }

    /// Compacts the disk layer now (``DiskStore/compact()``): reclaims the space of removed,
    /// replaced and expired items, the active segment's included.
    @discardableResult
    public func compact() throws(CaskError) -> CompactionReport {
        try changingDisk { () throws(CaskError) in try disk.compact() }
    }

    /// Runs a disk-layer call that may decide by access time and remove items: the memory
    /// layer's hits are handed down first, and what left the disk layer leaves memory after.
    private func changingDisk<R>(_ body: () throws(CaskError) -> R) throws(CaskError) -> R {
        copies.flushUses()
        defer { copies.catchUp() }
        return try body()
    }

    // MARK: Async variants

    // Every method that reads or writes files has an async overload of the same name, run off
    // Swift's cooperative pool (``contains(_:)`` and ``keys()`` touch no file and have none).

    /// ``removeValues(withPrefix:)`` off the caller's executor.
    @discardableResult
    public func removeValues(withPrefix prefix: String) async throws(CaskError) -> Int {
        try await Self.offload { () throws(CaskError) in try self.removeValues(withPrefix: prefix) }
    }

    /// ``removeValues(taggedWith:)`` off the caller's executor.
    @discardableResult
    public func removeValues(taggedWith tag: String) async throws(CaskError) -> Int {
        try await Self.offload { () throws(CaskError) in try self.removeValues(taggedWith: tag) }
    }

    /// ``metadata(forKey:)`` off the caller's executor.
    public func metadata(forKey key: String) async throws(CaskError) -> ItemMetadata? {
        try await Self.offload { () throws(CaskError) in try self.metadata(forKey: key) }
    }

    /// ``setPinned(_:forKey:)`` off the caller's executor.
    @discardableResult
    public func setPinned(_ pinned: Bool, forKey key: String) async throws(CaskError) -> Bool {
        try await Self.offload { () throws(CaskError) in try self.setPinned(pinned, forKey: key) }
    }

    /// ``sync()`` off the caller's executor.
    public func sync() async throws(CaskError) {
        try await Self.offload { () throws(CaskError) in try self.sync() }
    }

    /// ``compact()`` off the caller's executor.
    @discardableResult
    public func compact() async throws(CaskError) -> CompactionReport {
        try await Self.offload { () throws(CaskError) in try self.compact() }
    }

    /// ``close()`` off the caller's executor (closing syncs and writes the index snapshot).
    public func close() async throws(CaskError) {
        try await Self.offload { () throws(CaskError) in try self.close() }
    }
}
