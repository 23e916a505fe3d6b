import ArgumentParser
import Cask
import CaskToolSupport
import Foundation

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check every record and hint file; exit 0 only when all is well, 1 when damage is found, 3 when bytes could not be read (not damage: try again).")

    @Argument(help: "The store directory.") var directory: String
    @Flag(help: "Repair first: remove damaged hint files, cut a torn tail, apply the salvage rule, drop the keys of damaged records (read as a read would), and rewrite sealed segments without their damaged bytes (never deletes a good record). A store with bytes that cannot be read is not repaired (exit 3, nothing changed): a failed read is not damage.") var repair = false
    @Flag(help: "With --repair: give up bytes that still cannot be read after three tries, as damage (their records are dropped). Only for a disk that has lost them for good: a device that fails every read would lose the whole store.") var giveUpUnreadable = false

    func run() throws {
        let encryption = try toolEncryption()   // a bad key setting is reported first
        guard FileManager.default.fileExists(atPath: directory) else {
            throw noStore(directory, why: "the folder does not exist")
        }
        guard repair || !giveUpUnreadable else {
            printError("cask: --give-up-unreadable only applies with --repair; run `cask verify \(directory) --repair --give-up-unreadable`")
            throw Exit.usage
        }
        if repair { try repairStore(encryption) }
        try check(encryption)
    }

    /// The repair: damaged hint files, then an open (recovery), a scrub and a compaction.
    private func repairStore(_ encryption: StoreEncryption?) throws {
        let found = try withStoreErrors { try StoreVerifier(directory: directory, encryption: encryption).verify() }
        if let first = found.unreadable.first, !giveUpUnreadable {
            for p in found.unreadable { print("UNREADABLE \(p)") }
            printError("cask: \(found.unreadable.count) byte ranges of \(directory) could not be read, the first \(first); not repairing, and nothing was changed: a failed read is not damage. Check the disk (dmesg) and run the repair again; if the disk has lost those bytes for good, `cask verify \(directory) --repair --give-up-unreadable` drops the records there")
            throw Exit.storeError
        }
        let badHints = try removeDamagedHints(found)
        // Opening the store performs the recovery of format-spec.md (a torn tail is cut, the
        // salvage rule applied). The scrub then reads every live record as a read would
        // (recording no access): a damaged one's key is removed with a tombstone. The active
        // segment is sealed (it may hold damage that a later recovery would take for a torn
        // tail), and compaction rewrites the sealed segments that hold dead or damaged bytes.
        // With --give-up-unreadable, reads that keep failing read as zeros here (and only here):
        // their records fail their checksums, and the damage rules give them up (format-spec.md,
        // "A failed read is never damage"). Without it, a read that fails ends the repair.
        let salvaging = SalvagingFileSystem(wrapping: POSIXFileSystem())
        let store = try openStore(directory, for: .change) {
            $0.compaction.isAutomatic = false
            if giveUpUnreadable { $0.fileSystem = salvaging }
        }
        defer { try? store.close() }   // on every path: no store left to a background thread at exit
        let stats = store.statistics
        let (dropped, report, remaining) = try withStoreErrors { () throws -> (Int, CompactionReport, Int) in
            do {
                let dropped = try store.scrub()
                // The check before the open counts too (damage in a segment; a damaged hint is
                // replaced by the open): an open from the index snapshot scans no segment, so it
                // sees no damaged header.
                let segmentDamage = found.problems.contains { $0.file.hasSuffix(".cask") }
                let damaged = segmentDamage || stats.damagedRanges > 0 || stats.corruptRecords > 0 || dropped > 0
                if damaged { try store.sealActiveSegment() }
                let rewritten = damaged ? try store.compact() : CompactionReport()
                let remaining = store.count
                store.waitForBackgroundWork()   // the new hint files
                try store.close()   // its failure is the repair's: what it wrote must be durable
                return (dropped, rewritten, remaining)
            } catch {
                try? store.close()   // the first error is the one reported
                throw error
            }
        }
        for range in salvaging.unreadable { print("repair: gave up unreadable bytes: \(range)") }
        print("repair: removed \(badHints) damaged hint files, cut \(stats.tornTailBytes) torn-tail bytes, rescanned \(stats.segmentsScanned) segments, \(stats.damagedRanges) damaged ranges, \(stats.keysDroppedByRecovery + stats.corruptRecords + dropped) keys dropped, \(report.segmentsCompacted) segments rewritten, \(remaining) keys remain")
    }

    /// Removes the hint files that `found` reports damaged: they give recovery no knowledge
    /// (format-spec.md, "Recovery"), and the store writes a new one by scanning. An intact hint
    /// of a changed segment stays: it tells the open which records were lost, and the repair's
    /// compaction replaces it. Returns how many were removed.
    private func removeDamagedHints(_ found: StoreVerifier.Report) throws -> Int {
        let badHints = Set(found.problems.filter { $0.file.hasSuffix(".hint") && !$0.guidesSalvage }.map(\.file))
        for hint in badHints.sorted() {
            guard unlink(hint) != 0, errno != ENOENT else { continue }   // removed (or gone already)
            let code = errno
            printError("cask: cannot remove the damaged hint file \(hint): \(String(cString: strerror(code))) (errno \(code)); check the permissions of its folder, then run the repair again")
            throw Exit.storeError
        }
        return badHints.count
    }

    /// The check: every problem and unreadable range, then the exit status.
    private func check(_ encryption: StoreEncryption?) throws {
        let progress = Progress("verify")
        let report = try withStoreErrors {
            defer { progress.finish() }
            return try StoreVerifier(directory: directory, encryption: encryption).verify { done, total in progress.update(done, of: total) }
        }
        for p in report.problems { print("DAMAGED \(p)") }
        for p in report.unreadable { print("UNREADABLE \(p)") }
        if let torn = report.tornTail { print("torn tail (cut at the next open): \(torn)") }
        for file in report.leftovers { print("leftover (removed at the next open): \(file)") }
        print("\(report.segments) segments, \(report.records) records, \(report.hintFiles) hint files, \(Formatting.bytes(report.bytesChecked)) checked: \(report.isClean ? "OK" : "\(Formatting.count(report.problems.count, "problem")), \(Formatting.count(report.unreadable.count, "unreadable range"))")")
        if !report.problems.isEmpty {
            printError("cask: \(directory) is damaged (\(Formatting.count(report.problems.count, "problem"))); `cask verify \(directory) --repair` removes the damage and keeps every intact key")
            throw Exit.no
        }
        if let first = report.unreadable.first {
            // Bytes that could not be read are not damage (format-spec.md, "A failed read is never
            // damage"): the answer is "could not check", the status of an I/O failure.
            printError("cask: \(report.unreadable.count) byte ranges could not be read, the first \(first)")
            throw Exit.storeError
        }
        if !report.isClean { throw Exit.no }
    }
}
