import Foundation
import Testing
@testable import Cask

/// Whether this machine lets an unprivileged user namespace mount a tmpfs (`unshare -rm`).
let canMountTinyDisk = shellSucceeds("unshare -rm sh -c 'mount -t tmpfs -o size=64k tmpfs /tmp' 2>/dev/null")

/// The real system calls running out of space: `cask fill` writes until a put fails, then checks
/// that the error is typed and that every acknowledged value survives removes, a compaction
/// attempt and a reopen (see Sources/cask/Fill.swift).
@Suite struct DiskFullTests {
    @Test(.enabled(if: canMountTinyDisk, "needs unshare -rm (user namespaces)"))
    func aTinyTmpfsFilledToENOSPC() throws {
        guard let cask = harnessExecutable() else { Issue.record("cask-harness executable not built"); return }
        let mount = TemporaryDirectory()
        let (status, output) = try runShell("unshare -rm sh -c 'mount -t tmpfs -o size=300k tmpfs \(mount.path) && \(cask) fill \(mount.path)/store'")
        #expect(status == 0, "\(output)")
        #expect(output.contains("errno 28") && output.contains("OK"), "\(output)")
    }

    @Test func aFileSizeLimitGivesAShortWriteThenEFBIG() throws {
        guard let cask = harnessExecutable() else { Issue.record("cask-harness executable not built"); return }
        let dir = TemporaryDirectory()
        let (status, output) = try runShell("trap '' XFSZ; ulimit -f 300; \(cask) fill \(dir.path)/store --segment-size 1048576")
        #expect(status == 0, "\(output)")
        #expect(output.contains("errno 27") && output.contains("reopened") && output.contains("OK"), "\(output)")
    }
}
