import Cask

extension SimulatedFileSystem {
    /// A fresh file system holding `files` (name to bytes) in the folder `root`, each written,
    /// synced and closed, the folder synced: a store folder copied whole, for tests and fuzzers
    /// that damage a store made once.
    /// - Throws: what the file system throws (only when fault injection is armed on it).
    public static func holding(_ files: [String: [UInt8]], in root: String) throws(CaskError) -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        try fs.createDirectory(root)
        for (name, bytes) in files {
            let handle = try fs.open(root + "/" + name, mode: .createTruncate)
            // (A typed-throws closure here crashes the Swift 6.3.1 compiler in IRGen.)
            var failure: CaskError?
            bytes.withUnsafeBytes { raw in
                do throws(CaskError) { _ = try fs.append(handle, raw) } catch { failure = error }
            }
            if let failure { throw failure }
            try fs.sync(handle)
            fs.close(handle)
        }
        try fs.syncDirectory(root)
        return fs
    }

    /// Every file in the folder `root`, name to bytes: what ``holding(_:in:)`` takes.
    public func files(in root: String) throws(CaskError) -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try contentsOfDirectory(root) { files[name] = contents(of: root + "/" + name) }
        return files
    }
}
