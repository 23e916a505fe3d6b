import Foundation
import Testing
@testable import Cask

/// Whether strace can trace a child here (ptrace may be forbidden in some containers).
let straceWorks = shellSucceeds("strace -qq -e trace=none true 2>/dev/null")

/// Rollover, hint writing and compaction run under `strace -f`; tools/check_syscall_order.py
/// checks every rename, unlink and new segment against the fsync rules.
@Suite struct SyscallOrderTests {
    @Test(.enabled(if: straceWorks, "needs strace with ptrace allowed"))
    func renamesUnlinksAndNewSegmentsFollowTheFsyncRules() throws {
        guard let cask = harnessExecutable() else { Issue.record("cask-harness executable not built"); return }
        let dir = TemporaryDirectory()
        let store = dir.file("store"), trace = dir.file("trace")
        let checker = repositoryRoot.appendingPathComponent("tools/check_syscall_order.py").path
        let (traced, _) = try runShell("strace -f -qq -e trace=openat,write,pwrite64,fsync,fdatasync,rename,unlink,ftruncate -o \(trace) \(cask) torture \(store) --compact-every 30 --segment-size 4096 --operations 300 > /dev/null")
        #expect(traced == 0)
        let (status, report) = try runShell("python3 \(checker) \(trace) \(store)")
        print(report)
        #expect(status == 0, "\(report)")
        #expect(report.contains("0 violations") && !report.contains(" 0 renames") && !report.contains(" 0 segment unlinks"))
        // The checker is not vacuous: the same trace without its directory fsyncs fails.
        let (negative, negativeReport) = try runShell("grep -v -E 'fsync\\(|fsync resumed' \(trace) > \(trace).cut; python3 \(checker) \(trace).cut \(store)")
        #expect(negative == 1 && negativeReport.contains("VIOLATION"), "\(negativeReport)")
    }

    /// Segments of 1 MiB are sealed in the background, behind the gate (format-spec.md,
    /// "Rollover"): the next segment is prepared outside the lock and nothing is written to it
    /// before the sealed one's `fdatasync`. Rule 4 of the checker holds that order.
    @Test(.enabled(if: straceWorks, "needs strace with ptrace allowed"))
    func backgroundSealsSyncTheSealedSegmentBeforeWritingTheNext() throws {
        guard let cask = harnessExecutable() else { Issue.record("cask-harness executable not built"); return }
        let dir = TemporaryDirectory()
        let store = dir.file("store"), trace = dir.file("trace")
        let checker = repositoryRoot.appendingPathComponent("tools/check_syscall_order.py").path
        let (traced, _) = try runShell("strace -f -qq -e trace=openat,write,pwrite64,fsync,fdatasync,rename,unlink,ftruncate -o \(trace) \(cask) churn --count 20000 --ops 120000 --segment-size 1048576 --keep \(store) > /dev/null")
        #expect(traced == 0)
        let (status, report) = try runShell("python3 \(checker) \(trace) \(store)")
        print(report)
        #expect(status == 0, "\(report)")
        let files = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasSuffix(".cask") }
        #expect(files.count >= 3, "several rollovers: \(files)")
        // Not vacuous: without the fdatasyncs of the sealed segments, rule 4 fails.
        let (negative, negativeReport) = try runShell("grep -v -E 'fdatasync' \(trace) > \(trace).cut; python3 \(checker) \(trace).cut \(store)")
        #expect(negative == 1 && negativeReport.contains("had unsynced writes"), "\(negativeReport)")
    }
}
