import Cask
@_spi(Fuzzing) import CaskFormat
import CaskTesting
import Foundation

/// Builds a whole store folder from a valid store the library made (``BaseStore``) and the
/// input, read as mutation instructions that reach past the checksums (``Mutation``); then runs
/// `StoreVerifier`, a read-only open and a writing open (twice), reading every key. Any input
/// must give no trap and no hang, a typed error or a store, and never a value for a key that
/// was not written to it: every value returned must be one the base store wrote to that key,
/// or one in a record of that key whose checksum holds somewhere in the mutated segments
/// (the mutations can forge those; no store can tell them from real ones).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let base = BaseStore.shared
    if ProcessInfo.processInfo.environment["FUZZ_LIST_FILES"] != nil {
        for name in base.files.keys.sorted() { print(name, base.files[name]!.count) }
    }
    var files = base.files
    for m in Mutation.parse(UnsafeBufferPointer(start: data, count: size)) { m.apply(to: &files) }
    let fs = base.install(files)
    let oracle = Oracle(written: base.written, files: files)
    do {
        _ = try StoreVerifier(directory: BaseStore.root, fileSystem: fs).verify()
    } catch {}
    var readOnly = BaseStore.options(fs)
    readOnly.isReadOnly = true
    oracle.check(readOnly, stage: "read-only open")
    oracle.check(BaseStore.options(fs), stage: "writing open")
    oracle.check(BaseStore.options(fs), stage: "second writing open")
    return 0
}

/// What values a key may have.
final class Oracle {
    let written: [String: Set<[UInt8]>]
    let files: [String: [UInt8]]
    /// Values of every checksummed value record in the mutated segments, by key (made when first needed).
    lazy var forged: [[UInt8]: [[UInt8]?]] = {
        var found: [[UInt8]: [[UInt8]?]] = [:]
        for (name, bytes) in files where name.hasSuffix(".cask") {
            bytes.withUnsafeBytes { raw in FuzzEntryPoints.checksummedValues(raw) { key, value in found[key, default: []].append(value) } }
        }
        return found
    }()

    init(written: [String: Set<[UInt8]>], files: [String: [UInt8]]) {
        self.written = written
        self.files = files
    }

    /// Opens the store with `options`, reads every key and closes it; a typed error anywhere is fine.
    func check(_ options: StoreOptions, stage: String) {
        guard let store = try? DiskStore(directory: BaseStore.root, options: options) else { return }
        for key in store.keys() {
            guard let value = try? store.value(forKey: key) else { continue }
            if !allowed([UInt8](value), for: key) {
                FileHandle.standardError.write(Data(("FuzzStoreFolder: \(stage) returned \(value.count) bytes for \(key) that were never written to it (written: \(written[key]?.count ?? 0) values); value prefix \(Array(value.prefix(24)))\n").utf8))
                abort()
            }
        }
        try? store.close()
    }

    func allowed(_ value: [UInt8], for key: String) -> Bool {
        if written[key]?.contains(value) == true { return true }
        // A cache entry's value follows its entry header, so a suffix of a record's value counts.
        return (forged[Array(key.utf8)] ?? []).contains { stored in
            guard let stored else { return false }
            return stored.count >= value.count && stored.suffix(value.count).elementsEqual(value)
        }
    }
}
