import Foundation
import CaskFormat

/// Read-only opens (``StoreOptions/isReadOnly``): loading a store beside a writer, and
/// ``refresh()`` (format-spec.md, "Readers").
extension DiskStore {
    /// Read-only stores: reloads the store from its files, to see what a writing process has
    /// made durable (or handed to the OS) since the open or the last refresh. Values read before
    /// stay valid. Does nothing for a store open for writing, which always sees its own writes.
    ///
    /// - Throws: what opening throws; the store is then as it was before the call.
    public func refresh() throws(CaskError) {
        guard options.isReadOnly else { return }
        var fresh = try Self.loadReadOnly(directory: directory, options: options)
        let found = fresh.work.takeTagRemovalsFoundAtOpen()
        try state.withLock { s throws(CaskError) in
            guard !s.isClosed else { throw .closed }
            let stats = s.stats
            s = fresh
            s.stats.hits = stats.hits
            s.stats.misses = stats.misses
        }
        try applyTagRemovals(foundAtOpen: found)
    }

    /// Loads a store without changing anything in its directory (``StoreOptions/isReadOnly``).
    /// A writer's compaction deletes its inputs one by one: a directory listed meanwhile could
    /// show an old value without the tombstone that hid it. So the listing is taken while the
    /// lock file's deletion generation is even and kept only if it has not changed once every
    /// segment is open; a segment deleted between listing and opening also makes the load start
    /// over (format-spec.md, "Readers").
    static func loadReadOnly(directory: String, options: StoreOptions) throws(CaskError) -> StoreState {
        let fs = options.fileSystem
        var attempt = 0
        while true {
            do throws(CaskError) {
                try StoreFiles.requireExistingStore(directory, fs: fs)
                if attempt == 0 { try StorePermissionCheck.check(directory, options: options, writing: false) }
                let generation = try StoreLock.settledGeneration(in: directory, fs: fs)
                var options = options
                options.bindStore(try StoreIdentity.resolve(directory, options: options))
                var loader = StoreLoader(directory: directory, options: options)
                let snapshot = try loader.snapshot()
                if StoreLock.generation(in: directory, fs: fs) == generation { return try loader.load(snapshot) }
                options.logger.debug("a writer deleted segments while \(directory) was listed; loading again")
            } catch .io(let operation, let path, ENOENT) where attempt < 100 && path != directory {
                options.logger.debug("\(path) vanished during a read-only load (\(operation)); loading again")
            }
            attempt += 1
            if attempt > 100 {
                throw .io(operation: "list (a writer kept deleting segments)", path: directory, errno: EBUSY)
            }
        }
    }
}
