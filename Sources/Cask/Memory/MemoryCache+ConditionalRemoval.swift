extension MemoryCache {
    /// Removes the item of `key` when `shouldRemove` says so of its value, decided under the
    /// shard's lock (so that no write to the key comes between the check and the removal).
    /// Returns the removed value. Not an eviction: `onEviction` is not called.
    @discardableResult
    func removeValue(forKey key: String, where shouldRemove: (Value) -> Bool) -> Value? {
        let h = hash(key)
        let removed = withShard(h) { shard in shard.withLock { list -> (cost: Int, value: Value?)? in
            guard let i = list.position(of: key, hash: h), let value = list.entries[Int(i)].value, shouldRemove(value) else {
                return nil
            }
            let removed = list.remove(key, hash: h)
            if removed != nil { shard.publishOldest(list) }
            return removed
        } }
        guard let removed else { return nil }
        account(removedCount: 1, removedCost: removed.cost)
        return removed.value
    }
}
