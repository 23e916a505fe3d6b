import Foundation
import Synchronization
import Testing
@testable import Cask
import CaskFormat
import CaskTesting

/// A fresh directory under the system's temporary folder, removed when the value is released.
final class TemporaryDirectory: Sendable {
    let path: String

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        path = NSTemporaryDirectory() + "cask-tests/\(safe)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let now = Atomic<Int64>(1_800_000_000_000)
    var milliseconds: Int64 { now.load(ordering: .relaxed) }
    func advance(_ d: Duration) { now.add(d.milliseconds, ordering: .relaxed) }
    var wallClock: WallClock { WallClock { [self] in milliseconds } }
}

extension Duration {
    var milliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }
}

/// Deterministic bytes (SplitMix64), so that failures reproduce.
struct SeededBytes {
    var generator: SplitMix
    init(seed: UInt64) { generator = SplitMix(seed: seed) }
    mutating func next() -> UInt64 { generator.next() }
    /// Random bytes (incompressible).
    mutating func random(_ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count { bytes[i] = UInt8(truncatingIfNeeded: next()) }
        return Data(bytes)
    }
    /// Text-like bytes that LZ4 compresses about 2x.
    mutating func compressible(_ count: Int) -> Data {
        let words = ["cache", "value", "swift", "record", "segment", "index", " ", "\n", "0123"]
        var d = Data()
        while d.count < count { d.append(contentsOf: words[Int(next() % UInt64(words.count))].utf8) }
        return d.prefix(count)
    }
}

/// Options for tests: automatic compaction off unless asked for, so that file layouts are predictable.
func options(segmentSize: Int = 64 << 20, durability: Durability = .none, clock: WallClock = .system, compacting: Bool = false) -> StoreOptions {
    var o = StoreOptions()
    o.segmentSize = segmentSize
    o.durability = durability
    o.clock = clock
    o.compaction.isAutomatic = compacting
    o.logger.logLevel = .critical   // recovery tests damage stores on purpose; keep CI logs short
    return o
}

/// Runs a shell script; returns its exit status and combined output.
func runShell(_ script: String) throws -> (Int32, String) {
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

/// Lets other users read (not write) the store at `path`, which is owner-only by default: for
/// tests that run `cask` as another user on a store it may read.
func letOthersRead(_ path: String) throws {
    let (status, out) = try runShell("chmod -R go+rX '\(path)'")
    #expect(status == 0, "\(out)")
}

/// Whether a shell script succeeds here (for tests that need a capability the machine may lack).
func shellSucceeds(_ script: String) -> Bool {
    (try? runShell(script))?.0 == 0
}

// MARK: Processes

/// The repository's root folder.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Path of an executable of this package built beside the tests (tools/test.sh builds `cask`
/// and `cask-harness` first).
func executable(named name: String) -> String? {
    var candidates: [URL] = []
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var dir = me.deletingLastPathComponent()
    for _ in 0..<4 {
        candidates.append(dir.appendingPathComponent(name))
        dir = dir.deletingLastPathComponent()
    }
    candidates.append(repositoryRoot.appendingPathComponent(".build/debug/\(name)"))
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }?.path
}

/// Path of the shipped `cask` tool.
func caskExecutable() -> String? { executable(named: "cask") }

/// Path of `cask-harness` (crash, disk-full and exit harnesses).
func harnessExecutable() -> String? { executable(named: "cask-harness") }

/// Runs `cask` with `arguments`; returns exit status, standard output and standard error.
/// `environment` adds variables to this process's (CASK_KEY_FILE); a run past `timeout`
/// seconds is killed and reported as an issue (status -9).
func runCask(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 120) throws -> (Int32, String, String) {
    try run(executable: "cask", arguments, environment: environment, timeout: timeout)
}

/// Runs `cask-harness` with `arguments`; returns exit status, standard output and standard error.
func runHarness(_ arguments: [String]) throws -> (Int32, String, String) {
    try run(executable: "cask-harness", arguments)
}

private func run(executable name: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 600) throws -> (Int32, String, String) {
    guard let path = executable(named: name) else {
        Issue.record("the \(name) executable was not found; run `swift build --product \(name)` first")
        return (-1, "", "")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    try process.run()
    let watchdog = DispatchWorkItem { [process] in
        guard process.isRunning else { return }
        Issue.record("\(name) \(arguments.joined(separator: " ")) ran past \(timeout) s; killed")
        kill(process.processIdentifier, SIGKILL)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    defer { watchdog.cancel() }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

/// Runs `body(i)` for i in 0..<count, each on its own thread, and waits for all of them.
/// (Blocking loops would starve Swift's two-thread cooperative pool on this machine.)
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        Thread { body(i); group.leave() }.start()
    }
    group.wait()
}

/// Polls `condition` every 5 ms until it holds or `seconds` pass; returns the seconds waited.
/// For background work whose timing a loaded machine stretches (the compaction thread runs at
/// nice 10, so a busy CI machine can starve it for a while): assert the outcome, not the speed.
@discardableResult
func secondsUntil(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
    while try !condition() && elapsed() < seconds { usleep(5_000) }
    return elapsed()
}

func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    secondsUntil(within: seconds, condition)
    return condition()
}


/// Waits (up to `seconds`) for a window of `quiet` seconds in which `count` does not change;
/// returns whether one came. A thread that keeps running on a timer never gives one, however
/// loaded the machine; a thread that goes idle gives one as soon as it is scheduled and done.
func becomesQuiet(within seconds: Double, quiet: Double = 0.3, _ count: () -> Int) -> Bool {
    let start = DispatchTime.now().uptimeNanoseconds
    while Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 < seconds {
        let before = count()
        usleep(UInt32(quiet * 1e6))
        if count() == before { return true }
    }
    return false
}

/// Copies a store directory so that each damaged variant starts from the same bytes. The store
/// may be open: a file its background work removes or renames while the copy runs (a hint's
/// `.tmp`) is left out, as a crash at that moment would leave it (a CI run under
/// ThreadSanitizer copied a folder while its hint file was being renamed).
func copyStore(_ source: String, to destination: String) throws {
    let fm = FileManager.default
    try? fm.removeItem(atPath: destination)
    let mode = try fm.attributesOfItem(atPath: source)[.posixPermissions]
    try fm.createDirectory(atPath: destination, withIntermediateDirectories: true, attributes: mode.map { [.posixPermissions: $0] })
    for name in try fm.contentsOfDirectory(atPath: source) {
        do {
            try fm.copyItem(atPath: source + "/" + name, toPath: destination + "/" + name)
        } catch CocoaError.fileNoSuchFile, CocoaError.fileReadNoSuchFile {
            continue   // gone since the listing
        }
    }
}

/// Deletes the index snapshot a clean close wrote, so that the next open reads the hint files
/// (or scans): for tests of those paths.
func removeIndexSnapshot(_ dir: String) throws {
    let path = dir + "/INDEX"
    if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
}

/// Rewrites the file at `path` as a writer of format `version` (1 or 2) wrote it: the header's
/// version field and checksum and, for a hint file, its entries in the fixed 52-byte layout.
func rewriteAsOlderVersion(_ version: UInt32, path: String) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    if path.hasSuffix(".hint") {
        let segmentID = bytes.withUnsafeBytes { $0.u64(16) }, segmentSize = bytes.withUnsafeBytes { $0.u64(24) }
        var body: [UInt8] = []
        var count = 0
        let failure = bytes.withUnsafeBytes { raw in
            HintFile.parse(raw, segmentID: segmentID, segmentSize: segmentSize) { e, key in
                HintFile.appendVersion2Entry(e, key: key, to: &body)
                count += 1
            }
        }
        #expect(failure == nil, "\(path)")
        bytes = HintFile.encode(segmentID: segmentID, segmentSize: segmentSize, entryCount: count, body: body, version: version)
    } else {
        bytes.withUnsafeMutableBytes { $0.put(version, at: 8) }
        let crc = bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<40]))) }
        bytes.withUnsafeMutableBytes { $0.put(crc, at: 40) }
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func segmentPaths(_ dir: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".cask") }.sorted().map { dir + "/" + $0 }
}

func truncateFile(_ path: String, to length: Int) throws {
    let h = try Foundation.FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try h.truncate(atOffset: UInt64(length))
    try h.close()
}

func flipByte(_ path: String, at offset: Int) throws {
    var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    bytes[offset] ^= 0x5A
    try bytes.write(to: URL(fileURLWithPath: path))
}

/// Where each key's record lies (segment id, offset, size), read from the index.
func recordLocations(_ store: DiskStore) -> [String: (UInt32, Int, Int)] {
    store.state.withLock { s in
        Dictionary(uniqueKeysWithValues: s.index.all.map { ($0.key, ($0.entry.segment, Int($0.entry.offset), $0.entry.recordSize)) })
    }
}


/// Runs `CASK_LONG_TESTS=1 swift test --filter PowerLoss` for the long tier.
let longTier = ProcessInfo.processInfo.environment["CASK_LONG_TESTS"] == "1"

/// Options for a store on a simulated file system: no background flushes (so the N-th call is
/// the same call every time), small segments so rollovers happen often.
func simulatedOptions(_ fs: any CaskFileSystem, durability: Durability, segmentSize: Int = 4096) -> StoreOptions {
    var o = StoreOptions()
    o.fileSystem = fs
    o.durability = durability
    o.segmentSize = segmentSize
    o.flushInterval = .seconds(3600)
    o.compaction.isAutomatic = false
    o.logger.logLevel = .critical
    return o
}

/// The system's file system with hooks run before every `remove`, `open` and `sync`: for tests
/// that act at an exact point of a deletion (another process listing the directory halfway,
/// say) or while an `fdatasync` waits for the device.
final class HookedFileSystem: CaskFileSystem, @unchecked Sendable {
    // @unchecked: the hooks are behind a lock (tests set them while the store's threads open files).
    private let base = POSIXFileSystem()
    private let hooks = Locked<(remove: (String) -> Void, open: (String) -> Void, sync: () -> Void)>(({ _ in }, { _ in }, {}))
    var beforeRemove: (String) -> Void {
        get { hooks.withLock { $0.remove } }
        set { hooks.withLock { $0.remove = newValue } }
    }
    var beforeOpen: (String) -> Void {
        get { hooks.withLock { $0.open } }
        set { hooks.withLock { $0.open = newValue } }
    }
    var beforeSync: () -> Void {
        get { hooks.withLock { $0.sync } }
        set { hooks.withLock { $0.sync = newValue } }
    }
    /// Every `startWriteback` (file descriptor, offset, count) and `sync` (descriptor, -1, -1), in order.
    let writebacksAndSyncs = Locked<[(Int32, Int64, Int64)]>([])

    func open(_ path: String, mode: CaskFileHandle.OpenMode) throws(CaskError) -> CaskFileHandle {
        beforeOpen(path)
        return try base.open(path, mode: mode)
    }
    func close(_ handle: CaskFileHandle) { base.close(handle) }
    func append(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer) throws(CaskError) -> Int { try base.append(handle, buffer) }
    func read(_ handle: CaskFileHandle, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(CaskError) -> Int {
        try base.read(handle, into: buffer, at: offset)
    }
    func sync(_ handle: CaskFileHandle) throws(CaskError) {
        writebacksAndSyncs.withLock { $0.append((handle.rawValue, -1, -1)) }
        beforeSync()
        try base.sync(handle)
    }
    func startWriteback(_ handle: CaskFileHandle, offset: Int64, count: Int64) {
        writebacksAndSyncs.withLock { $0.append((handle.rawValue, offset, count)) }
        base.startWriteback(handle, offset: offset, count: count)
    }
    func syncDirectory(_ path: String) throws(CaskError) { try base.syncDirectory(path) }
    func size(_ handle: CaskFileHandle) throws(CaskError) -> Int64 { try base.size(handle) }
    func truncate(_ handle: CaskFileHandle, to length: Int64) throws(CaskError) { try base.truncate(handle, to: length) }
    func rename(_ source: String, to destination: String) throws(CaskError) { try base.rename(source, to: destination) }
    func remove(_ path: String) throws(CaskError) {
        beforeRemove(path)
        try base.remove(path)
    }
    func contentsOfDirectory(_ path: String) throws(CaskError) -> [String] { try base.contentsOfDirectory(path) }
    func createDirectory(_ path: String) throws(CaskError) { try base.createDirectory(path) }
    func tryLock(_ handle: CaskFileHandle) throws(CaskError) -> Bool { try base.tryLock(handle) }
    func overwrite(_ handle: CaskFileHandle, _ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(CaskError) {
        try base.overwrite(handle, buffer, at: offset)
    }
    func permissions(of path: String) throws(CaskError) -> UInt16? { try base.permissions(of: path) }
    func setPermissions(_ mode: UInt16, of path: String) throws(CaskError) { try base.setPermissions(mode, of: path) }
}

/// Options for ``prepareRemovedVictim(_:)``: small segments, compaction by hand.
func removedVictimOptions(_ fs: any CaskFileSystem) -> StoreOptions {
    var o = StoreOptions()
    o.fileSystem = fs
    o.segmentSize = 4096
    o.compaction.isAutomatic = false
    o.compaction.maximumPassBytes = 1 << 20
    o.logger.logLevel = .critical
    return o
}

/// Leaves key "victim" removed, with its old value in a compacted segment whose id is above the
/// log segment that holds its tombstone, and garbage everywhere: the next `compact()` takes both
/// segments and drops both records. (The shape that found the half-deleted-inputs bug.)
func prepareRemovedVictim(_ store: DiskStore) throws {
    try store.setValue(Data("the old value".utf8), forKey: "victim")
    for i in 0..<80 { try store.setValue(Data(repeating: 1, count: 100), forKey: "fill\(i % 40)") }
    try store.compact()   // the victim now lives in a compacted segment
    let compacted = try #require(recordLocations(store)["victim"]).0
    let active = try #require(store.segmentInfo().first { $0.isActive }).id
    #expect(compacted > active)   // compaction outputs take the next id: above the active segment
    #expect(try store.removeValue(forKey: "victim"))   // its tombstone: in the active segment
    for i in 0..<80 { try store.setValue(Data(repeating: 2, count: 100), forKey: "fill\(i % 40)") }
}

/// A count shared by closures and tasks (an `Atomic` itself cannot be captured by them).
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
    func update(to value: Int) { count.store(value, ordering: .relaxed) }
}

/// A value shared by closures and tasks, behind a lock (the store's `Locked`: ThreadSanitizer
/// does not see `Synchronization.Mutex` on Linux).
final class Shared<Value: Sendable>: Sendable {
    private let lock: Locked<Value>
    init(_ value: Value) { lock = Locked(value) }
    var value: Value { lock.withLock { $0 } }
    func update<R: Sendable>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&$0) } }
}

/// ``waitUntil(_:_:)`` for async tests: sleeps the task, not the thread (a blocked thread of
/// Swift's small cooperative pool would hold up the very work the test waits for).
/// Gives up only after `seconds` of its own sleeps (5 ms polls), not of wall time: when the
/// test process's other tests hold every thread of the pool, this task does not run either,
/// and the wall clock says nothing about how long the awaited work had.
func eventually(within seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
    var polls = Int(seconds * 200)
    while try await !condition() {
        if polls == 0 { return false }
        polls -= 1
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Appends the record of `key` in store `source` (its bytes as they lie in their segment) to the
/// newest segment of store `target`: what someone who can write both stores' files can do.
func appendForeignRecord(_ key: String, from source: String, to target: String, options o: StoreOptions) throws {
    let store = try DiskStore(directory: source, options: o)
    let (id, offset, size) = try #require(recordLocations(store)[key])
    try store.close()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: source + "/" + FileNames.segment(id)))[offset..<(offset + size)]
    let newest = try #require(try segmentPaths(target).last)
    let handle = try Foundation.FileHandle(forWritingTo: URL(fileURLWithPath: newest))
    try handle.seekToEnd()
    try handle.write(contentsOf: bytes)
    try handle.close()
    try removeIndexSnapshot(target)
}

/// The format version in the header of each segment of the store at `dir`, by file name.
func segmentVersions(_ dir: String) throws -> [UInt32] {
    try segmentPaths(dir).map { path in try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { $0.load(fromByteOffset: 8, as: UInt32.self) } }
}

/// A copy of a committed fixture store (Tests/CaskTests/Fixtures) in `dir`, and its key.
func fixtureStore(_ name: String, in dir: TemporaryDirectory) throws -> (path: String, key: EncryptionKey) {
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    let path = dir.file(name)
    try copyStore(fixtures.appendingPathComponent(name).path, to: path)
    let hex = try String(contentsOf: fixtures.appendingPathComponent(name + ".key"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    var bytes: [UInt8] = []
    var rest = Substring(hex)
    while rest.count >= 2 { bytes.append(try #require(UInt8(rest.prefix(2), radix: 16))); rest = rest.dropFirst(2) }
    return (path, try EncryptionKey(bytes: bytes))
}

/// Appends to `segment` a record with a valid checksum and no value (a tombstone by default)
/// claiming `sequence`: what someone who can write the files, with no key, can add.
func appendForgedRecord(to segment: String, sequence: UInt64, key: String, kind: Format.RecordKind = .tombstone, expiry: Int64 = 0) throws {
    let keyBytes = Array(key.utf8)
    let header = RecordHeader(sequence: sequence, writeTime: 1_800_000_000_000, expiry: expiry, kind: kind, flags: 0,
                              keyLength: keyBytes.count, storedLength: 0, originalLength: 0)
    var record = [UInt8](repeating: 0, count: header.encodedSize)
    record.withUnsafeMutableBytes { out in
        keyBytes.withUnsafeBytes { k in RecordCodec.encode(header, key: k, value: UnsafeRawBufferPointer(start: nil, count: 0), into: out) }
    }
    let h = try Foundation.FileHandle(forWritingTo: URL(fileURLWithPath: segment))
    try h.seekToEnd()
    try h.write(contentsOf: Data(record))
    try h.close()
}
