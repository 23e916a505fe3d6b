import Cask
import CaskSupport
import Foundation

/// An in-memory file system for crash-recovery tests: it keeps what each file held at its last
/// `fsync` apart from what was written since, and which directory entries a directory `fsync`
/// made durable, so that a test can "pull the plug" at any moment and boot a new file system
/// from what a disk could really have kept.
///
/// ```swift
/// let fs = SimulatedFileSystem()
/// fs.crash(afterCalls: 120)                       // the 120th call and all later ones fail (EIO)
/// var options = StoreOptions(); options.fileSystem = fs
/// ... run a workload against a DiskStore, remembering what was acknowledged ...
/// let rebooted = fs.reboot(.dropUnsynced)          // what survived the power loss
/// options.fileSystem = rebooted
/// let store = try DiskStore(directory: "/store", options: options)   // check it against your model
/// ```
///
/// Thread-safe. Paths are plain strings; directories exist implicitly once created.
public final class SimulatedFileSystem: CaskFileSystem, @unchecked Sendable {
    // @unchecked: all mutable state is behind `lock`.

    /// What a power loss may leave of unsynced data and directory changes.
    public enum CrashModel: String, Sendable, CaseIterable {
        /// Every file reverts to its last synced content; directory changes all persist.
        case dropUnsynced
        /// As `dropUnsynced`, and creates, renames and unlinks not covered by a directory fsync are undone.
        case dropUnsyncedAndDirectoryChanges
        /// Each file keeps a random prefix of what was appended since its last sync.
        case keepRandomPrefix
        /// The unsynced appended range becomes zeros or random bytes, in 4 KiB blocks.
        case garbleUnsyncedTail
        /// A random subset of unsynced 4 KiB pages persists, out of order; the rest revert.
        case persistRandomPages
        /// Renames persist, but a renamed file's unsynced data does not.
        case renameWithoutData
    }

    final class Inode: @unchecked Sendable {
        var data: [UInt8] = []
        var durable: [UInt8] = []
        var lockOwner: Int32?
    }

    private struct Handle {
        let inode: Inode
        let path: String
        let append: Bool
    }

    private final class State: @unchecked Sendable {
        var names: [String: Inode] = [:]
        var durableNames: [String: Inode] = [:]
        var directories: Set<String> = ["/"]
        var handles: [Int32: Handle] = [:]
        var nextHandle: Int32 = 3
        var calls = 0
        var crashAt = Int.max
        var crashed = false
        /// The file system as it was when the crash happened.
        var snapshot: (names: [String: ([UInt8], [UInt8])], durableNames: [String: ([UInt8], [UInt8])], directories: Set<String>)?
    }

    private let lock = NSLock()
    private let state = State()

    public init() {}

    /// Number of calls made so far (every method counts, except `close`).
    public var callCount: Int { lock.withLock { state.calls } }

    /// Simulates a power loss at call number `n` (1-based): that call and every later one fail
    /// with EIO and change nothing. ``reboot(_:seed:)`` then boots from the state before call n.
    public func crash(afterCalls n: Int) { lock.withLock { state.crashAt = n } }

    /// Whether the simulated crash has happened.
    public var hasCrashed: Bool { lock.withLock { state.crashed } }

    /// A new file system holding what a disk could have kept after a power loss under `model`
    /// (at the crash point, or now if no crash was set). Everything in it counts as synced.
    public func reboot(_ model: CrashModel, seed: UInt64 = 1) -> SimulatedFileSystem {
        lock.lock()
        defer { lock.unlock() }
        let snap = state.snapshot ?? takeSnapshot()
        var rng = SplitMix(seed: seed)
        let next = SimulatedFileSystem()
        next.state.directories = snap.directories
        let entries = model == .dropUnsyncedAndDirectoryChanges ? snap.durableNames : snap.names
        for (path, (data, durable)) in entries.sorted(by: { $0.key < $1.key }) {
            let inode = Inode()
            inode.data = Self.crashImage(data: data, durable: durable, model: model, rng: &rng)
            inode.durable = inode.data
            next.state.names[path] = inode
        }
        next.state.durableNames = next.state.names
        return next
    }

    private func takeSnapshot() -> (names: [String: ([UInt8], [UInt8])], durableNames: [String: ([UInt8], [UInt8])], directories: Set<String>) {
        (state.names.mapValues { ($0.data, $0.durable) }, state.durableNames.mapValues { ($0.data, $0.durable) }, state.directories)
    }

    static func crashImage(data: [UInt8], durable: [UInt8], model: CrashModel, rng: inout SplitMix) -> [UInt8] {
        switch model {
        case .dropUnsynced, .dropUnsyncedAndDirectoryChanges, .renameWithoutData:
            return durable
        case .keepRandomPrefix:
            guard data.count > durable.count, data.starts(with: durable) else { return durable }
            let extra = Int(rng.next() % UInt64(data.count - durable.count + 1))
            return Array(data[0..<(durable.count + extra)])
        case .garbleUnsyncedTail:
            guard data.count > durable.count, data.starts(with: durable) else { return durable }
            var out = data
            var block = durable.count
            while block < out.count {
                let end = min(out.count, (block / 4096 + 1) * 4096)
                switch rng.next() % 3 {
                case 0: for i in block..<end { out[i] = 0 }
                case 1: for i in block..<end { out[i] = UInt8(truncatingIfNeeded: rng.next()) }
                default: break
                }
                block = end
            }
            return out
        case .persistRandomPages:
            let length = rng.next() % 2 == 0 ? data.count : max(durable.count, data.count)
            var out = [UInt8](repeating: 0, count: length)
            for i in 0..<min(length, durable.count) { out[i] = durable[i] }
            var page = 0
            while page < length {
                let end = min(length, page + 4096)
                let changed = end > durable.count || data[page..<min(end, data.count)] != durable[page..<min(end, durable.count)]
                if changed && rng.next() % 2 == 0 {
                    for i in page..<end { out[i] = i < data.count ? data[i] : 0 }
                }
                page = end
            }
            return out
        }
    }

    // MARK: Call accounting

    private func enter(_ op: String, _ path: String) throws(CaskError) {
        state.calls += 1
        if state.crashed || state.calls >= state.crashAt {
            if !state.crashed {
                state.snapshot = takeSnapshot()
                state.crashed = true
            }
            throw .io(operation: op, path: path, errno: EIO)
        }
    }

    private func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "/" }
        let p = String(path[..<slash])
        return p.isEmpty ? "/" : p
    }

    private func handle(_ h: CaskFileHandle, _ op: String) throws(CaskError) -> Handle {
        guard let handle = state.handles[h.rawValue] else { throw .io(operation: op, path: "fd \(h.rawValue)", errno: EBADF) }
        return handle
    }

    // MARK: CaskFileSystem

    public func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle {
        lock.lock(); defer { lock.unlock() }
        try enter("open", path)
        var inode = state.names[path]
        switch mode {
        case .read:
            guard inode != nil else { throw .io(operation: "open", path: path, errno: ENOENT) }
        case .appendOrCreate, .createTruncate:
            guard state.directories.contains(parent(path)) else { throw .io(operation: "open", path: path, errno: ENOENT) }
            if inode == nil {
                inode = Inode()
                state.names[path] = inode
            } else if mode == .createTruncate {
                inode!.data = []
            }
        }
        let fd = state.nextHandle
        state.nextHandle += 1
        state.handles[fd] = Handle(inode: inode!, path: path, append: mode == .appendOrCreate)
        return CaskFileHandle(rawValue: fd)
    }

    public func close(_ h: CaskFileHandle) {
        lock.lock(); defer { lock.unlock() }
        // A lock belongs to the handle that took it, as with flock(2).
        if let handle = state.handles.removeValue(forKey: h.rawValue), handle.inode.lockOwner == h.rawValue {
            handle.inode.lockOwner = nil
        }
    }

    public func append(_ h: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "write")
        try enter("write", handle.path)
        handle.inode.data.append(contentsOf: buffer)
        return buffer.count
    }

    public func read(_ h: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "pread")
        try enter("pread", handle.path)
        let data = handle.inode.data
        guard offset < data.count else { return 0 }
        let n = min(buffer.count, data.count - Int(offset))
        data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<(Int(offset) + n)])) }
        return n
    }

    public func sync(_ h: CaskFileHandle) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "fsync")
        try enter("fsync", handle.path)
        handle.inode.durable = handle.inode.data
    }

    public func syncDirectory(_ path: String) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        try enter("fsync directory", path)
        let prefix = path.hasSuffix("/") ? path : path + "/"
        for (name, _) in state.durableNames where name.hasPrefix(prefix) && parent(name) == path && state.names[name] == nil {
            state.durableNames[name] = nil
        }
        for (name, inode) in state.names where name.hasPrefix(prefix) && parent(name) == path {
            state.durableNames[name] = inode
        }
    }

    public func size(_ h: CaskFileHandle) throws(CaskError) -> Int64 {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "fstat")
        try enter("fstat", handle.path)
        return Int64(handle.inode.data.count)
    }

    public func truncate(_ h: CaskFileHandle, to length: Int64) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "ftruncate")
        try enter("ftruncate", handle.path)
        let n = Int(length)
        if n < handle.inode.data.count { handle.inode.data.removeSubrange(n...) }
        else { handle.inode.data.append(contentsOf: [UInt8](repeating: 0, count: n - handle.inode.data.count)) }
    }

    public func rename(_ source: String, to destination: String) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        try enter("rename", source)
        guard let inode = state.names.removeValue(forKey: source) else { throw .io(operation: "rename", path: source, errno: ENOENT) }
        state.names[destination] = inode
    }

    public func remove(_ path: String) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        try enter("unlink", path)
        state.names[path] = nil
    }

    public func contentsOfDirectory(_ path: String) throws(CaskError) -> [String] {
        lock.lock(); defer { lock.unlock() }
        try enter("opendir", path)
        guard state.directories.contains(path) else { throw .io(operation: "opendir", path: path, errno: ENOENT) }
        let prefix = path.hasSuffix("/") ? path : path + "/"
        return state.names.keys.filter { $0.hasPrefix(prefix) && parent($0) == path }.map { String($0.dropFirst(prefix.count)) }
            + state.directories.filter { $0 != path && $0.hasPrefix(prefix) && parent($0) == path }.map { String($0.dropFirst(prefix.count)) }
    }

    public func createDirectory(_ path: String) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        try enter("mkdir", path)
        var p = path
        while p != "/" && !p.isEmpty {
            state.directories.insert(p)
            p = parent(p)
        }
    }

    public func tryLock(_ h: CaskFileHandle) throws(CaskError) -> Bool {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "flock")
        try enter("flock", handle.path)
        if let owner = handle.inode.lockOwner, owner != h.rawValue { return false }
        handle.inode.lockOwner = h.rawValue
        return true
    }

    public func overwrite(_ h: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError) {
        lock.lock(); defer { lock.unlock() }
        let handle = try handle(h, "pwrite")
        try enter("pwrite", handle.path)
        let end = Int(offset) + buffer.count
        if handle.inode.data.count < end { handle.inode.data.append(contentsOf: [UInt8](repeating: 0, count: end - handle.inode.data.count)) }
        for i in 0..<buffer.count { handle.inode.data[Int(offset) + i] = buffer[i] }
    }

    /// The current content of a file (for tests that damage or inspect files), or nil.
    public func contents(of path: String) -> [UInt8]? { lock.withLock { state.names[path]?.data } }
}

/// A small deterministic random generator (SplitMix64) for reproducible crash images and
/// seeded tests: the store's own sampling generator, seeded.
public struct SplitMix: Sendable {
    var generator: FastRandom
    public init(seed: UInt64) { generator = FastRandom(seed: seed) }
    public mutating func next() -> UInt64 { generator.next() }
}
