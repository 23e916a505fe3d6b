import Foundation
import Testing
@testable import Cask

/// Whether strace can trace a child here (ptrace may be forbidden in some containers).
let straceWorks: Bool = {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", "strace -qq -e trace=none true"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}()

/// Rollover, hint writing and compaction run under `strace -f`; tools/check_syscall_order.py
/// checks every rename, unlink and new segment against the fsync rules.
@Suite struct SyscallOrderTests {
    func sh(_ script: String) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    @Test(.enabled(if: straceWorks, "needs strace with ptrace allowed"))
    func renamesUnlinksAndNewSegmentsFollowTheFsyncRules() throws {
        guard let cask = caskExecutable() else { Issue.record("cask executable not built"); return }
        let dir = TemporaryDirectory()
        let store = dir.file("store"), trace = dir.file("trace")
        let checker = IndependentReaderTests.root.appendingPathComponent("tools/check_syscall_order.py").path
        let (traced, _) = try sh("strace -f -qq -e trace=openat,write,pwrite64,fsync,fdatasync,rename,unlink,ftruncate -o \(trace) \(cask) torture \(store) --compact-every 30 --segment-size 4096 --operations 300 > /dev/null")
        #expect(traced == 0)
        let (status, report) = try sh("python3 \(checker) \(trace) \(store)")
        print(report)
        #expect(status == 0, "\(report)")
        #expect(report.contains("0 violations") && !report.contains(" 0 renames") && !report.contains(" 0 segment unlinks"))
        // The checker is not vacuous: the same trace without its directory fsyncs fails.
        let (negative, negativeReport) = try sh("grep -v -E 'fsync\\(|fsync resumed' \(trace) > \(trace).cut; python3 \(checker) \(trace).cut \(store)")
        #expect(negative == 1 && negativeReport.contains("VIOLATION"), "\(negativeReport)")
    }
}
