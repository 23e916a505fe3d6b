#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Named places where a test process can be told to die (SIGKILL) in the middle of a multi-step
/// file operation, to prove each intermediate state recovers. The name to die at is read once
/// from the environment variable `CASK_CRASH_AT`; when it is unset, reaching a point costs one
/// comparison of a static optional.
package enum CrashPoint: String, Sendable, CaseIterable {
    /// Rollover: the old segment is synced, the new one not yet created.
    case rolloverBeforeNewSegment = "rollover.before-new-segment"
    /// A hint file's temporary file is written and synced, not yet renamed.
    case hintBeforeRename = "hint.before-rename"
    /// Compaction: output records written to the temporary file, not yet synced.
    case compactionOutputWritten = "compaction.output-written"
    /// Compaction: output synced, its hint written, the output not yet renamed into place.
    case compactionBeforeRename = "compaction.before-rename"
    /// Compaction: output renamed and the directory synced; the index not yet switched.
    case compactionBeforeSwitch = "compaction.before-switch"
    /// Compaction: index switched; the input segments not yet deleted.
    case compactionBeforeDelete = "compaction.before-delete"
    /// Compaction: some input segments deleted, the directory not yet synced.
    case compactionDuringDelete = "compaction.during-delete"

    @usableFromInline static let armed: CrashPoint? = {
        guard let raw = getenv("CASK_CRASH_AT") else { return nil }
        return CrashPoint(rawValue: String(cString: raw))
    }()

    /// Kills the process with SIGKILL when this is the armed point.
    @inlinable @inline(__always)
    package func reach() {
        if let armed = Self.armed, armed == self {
            kill(getpid(), SIGKILL)
        }
    }
}
