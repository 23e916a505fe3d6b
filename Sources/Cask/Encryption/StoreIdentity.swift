import CaskFormat

/// Which store binding an open's seals use (format-spec.md, "Store id"), decided before the
/// store is loaded. The rules:
///
/// - `STOREID` present: it is read strictly; one that is not valid refuses the open
///   (``CaskError/storeIDUnusable(path:reason:)``), since no sealed value could be trusted.
/// - Missing, in a store with a version-8 segment: refused the same way (its records bind an id
///   that is gone; never answered).
/// - Missing otherwise (a new store, or one written before store ids, version 7): a writing open
///   makes one, with a fresh random id and as legacy limit the highest segment id present, once
///   the keys are known to fit (a refused open changes nothing); a read-only open reads the
///   version-7 segments as they were written (no binding).
///
/// Without encryption nothing is sealed: the file is neither read nor made (a store gets one at
/// its first encrypted writing open, which an unencrypted store with records refuses).
enum StoreIdentity {
    /// The binding for an open of the store in `directory` with `options` (whose lock a
    /// writing open holds), made durable first when it is new; nil without encryption or for a
    /// read-only open of a version-7 store.
    static func resolve(_ directory: String, options: StoreOptions) throws(CaskError) -> StoreBinding? {
        let fs = options.fileSystem
        guard options.keyring != nil else { return nil }
        if let binding = try StoreIDFile.read(in: directory, fs: fs) { return binding }
        let loader = StoreLoader(directory: directory, options: options)
        let snapshot = try loader.snapshot()
        // Read again after the headers: a writer makes the file before its first version-8 segment.
        if let binding = try StoreIDFile.read(in: directory, fs: fs) { return binding }
        if let bound = snapshot.opened.first(where: { $0.version >= Format.sealedVersion }) {
            throw .storeIDUnusable(path: FileNames.join(directory, StoreIDFile.name),
                                   reason: "is missing, and \(bound.file.path) is sealed for the store's id (format version \(bound.version))")
        }
        guard !options.isReadOnly else { return nil }
        // Before anything is written: an open the keys refuse changes nothing.
        try EncryptionCheck.check(StoreLoader.notCleared(snapshot.opened), keyring: options.keyring)
        let binding = StoreBinding.random(legacyLimit: snapshot.listing.segmentIDs.last ?? 0)
        try StoreIDFile.write(binding, in: directory, fs: fs)
        if binding.legacyLimit > 0 { options.logger.info("\(directory) has a store id now; its segments up to \(binding.legacyLimit) keep their version-7 seals until compaction rewrites them") }
        return binding
    }
}
