import Foundation
import Testing
@testable import Cask
import CaskFormat
import CaskTesting

/// Inputs found by `Fuzz/FuzzStoreFolder` (issue 41), replayed on the store they damaged.
@Suite struct StoreFolderFuzzFindingsTests {
    /// `LOCK` holding a deletion generation near 2^64 (format-spec.md, "Lock file"): a writing open
    /// trapped on `+ 2` (StoreLock.acquire), and a compaction's deletions could trap on `+ 1`.
    /// Now the arithmetic wraps, keeps the parity rule, and never repeats the generation found.
    @Test(arguments: [UInt64.max, UInt64.max - 1, UInt64.max - 3, UInt64.max - 2])
    func aLockGenerationNear2To64(_ forged: UInt64) throws {
        let base = try AgreementBase.make()
        var files = base.files
        try #require(files["LOCK"]?.count == LockFileContent.size)
        files["LOCK"]!.withUnsafeMutableBytes { $0.put(forged, at: LockFileContent.generationOffset) }
        let fs = try AgreementBase.install(files)
        let store = try DiskStore(directory: AgreementBase.root, options: base.options(fs))
        let opened = try #require(StoreLock.generation(in: AgreementBase.root, fs: fs))
        #expect(opened != forged && opened & 1 == 0)
        let report = try store.compact()   // its deletions write an odd generation, then an even one
        #expect(report.segmentsCompacted > 0)
        let after = try #require(StoreLock.generation(in: AgreementBase.root, fs: fs))
        #expect(after != opened && after & 1 == 0)
        try store.setValue(Array("new".utf8), forKey: "new")
        try store.close()
        let reopened = try DiskStore(directory: AgreementBase.root, options: base.options(fs))
        for (key, value) in base.latest { #expect(try reopened.value(forKey: key).map { [UInt8]($0) } == value) }
        #expect(try reopened.value(forKey: "new") != nil)
        try reopened.close()
    }
}
