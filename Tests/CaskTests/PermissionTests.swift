import Foundation
import Testing
@testable import Cask

/// Owner-only files by default, whatever the umask; ``StorePermissions/groupReadable``; a
/// store others could write is refused and left as it was; backups keep the modes; another user
/// cannot read a store made with the defaults.
@Suite struct PermissionTests {
    func mode(_ path: String) throws -> UInt16 {
        try #require(try POSIXFileSystem().permissions(of: path))
    }

    /// Every entry of `path` with its mode (octal), and the folder's own as ".".
    func modes(_ path: String) throws -> [String: String] {
        var result = [".": String(try mode(path), radix: 8)]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            result[name] = String(try mode(path + "/" + name), radix: 8)
        }
        return result
    }

    /// A store with several segments, hint files and (after close) an index snapshot.
    func fill(_ path: String, permissions: StorePermissions = .ownerOnly) throws {
        var o = options(segmentSize: 4096)
        o.permissions = permissions
        let store = try DiskStore(directory: path, options: o)
        for i in 0..<100 { try store.setValue(Data(repeating: UInt8(i), count: 200), forKey: "k\(i % 30)") }
        try store.compact()
        try store.close()
    }

    /// The `cask` tool under umask 000, 022 and 077 makes folders 0700 and files 0600.
    @Test(arguments: ["000", "022", "077"])
    func newStoresAreOwnerOnlyWhateverTheUmask(umask: String) throws {
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let dir = TemporaryDirectory()
        let store = dir.file("parent/store")
        let (status, out) = try runShell("umask \(umask) && \(cask) put \(store) k v && \(cask) compact \(store)")
        #expect(status == 0, "\(out)")
        let found = try modes(store)
        #expect(found.count > 2, "\(found)")
        #expect(found.allSatisfy { $0.key == "." ? $0.value == "700" : $0.value == "600" }, "umask \(umask): \(found)")
        #expect(try mode(dir.file("parent")) == 0o700, "missing parents are made owner-only too")
    }

    @Test func groupReadableStoresAreExactly0750And0640() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try fill(store, permissions: .groupReadable)
        let found = try modes(store)
        #expect(found.count > 3, "\(found)")
        #expect(found.allSatisfy { $0.key == "." ? $0.value == "750" : $0.value == "640" }, "\(found)")
    }

    /// A folder or a file that others may write: the open (writing or read-only) is refused
    /// with the path, the mode and the fix, and nothing in the folder changes.
    @Test(arguments: [("folder", 0o777 as UInt16), ("folder", 0o730), ("segment", 0o666), ("segment", 0o620), ("snapshot", 0o602)])
    func aStoreOthersCanWriteIsRefusedAndLeftAsItWas(what: String, unsafe: UInt16) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try fill(store)
        let names = try FileManager.default.contentsOfDirectory(atPath: store)
        let target = switch what {
        case "folder": store
        case "segment": store + "/" + (try #require(names.filter { $0.hasSuffix(".cask") }.sorted().first))
        default: store + "/INDEX"
        }
        try POSIXFileSystem().setPermissions(unsafe, of: target)
        let before = try directoryFingerprint(store)
        let beforeModes = try modes(store)
        for readOnly in [false, true] {
            var o = options()
            o.isReadOnly = readOnly
            #expect(throws: CaskError.unsafePermissions(path: target, mode: unsafe)) { try DiskStore(directory: store, options: o) }
        }
        #expect(try directoryFingerprint(store) == before)
        #expect(try modes(store) == beforeModes)
        let text = CaskError.unsafePermissions(path: target, mode: unsafe).description
        #expect(text.contains(target) && text.contains(String(unsafe, radix: 8)) && text.contains("chmod go-w"), "\(text)")
    }

    /// A store of an older Cask (0755 and 0644): a writing open closes the folder to others
    /// (0700), which closes every file in it; a read-only open changes nothing.
    @Test func anOlderStoreReadableByOthersIsClosedByAWriterOnly() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try fill(store)
        let fs = POSIXFileSystem()
        try fs.setPermissions(0o755, of: store)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) { try fs.setPermissions(0o644, of: store + "/" + name) }
        var readOnly = options()
        readOnly.isReadOnly = true
        let reader = try DiskStore(directory: store, options: readOnly)
        #expect(try reader.value(forKey: "k1") != nil)
        try reader.close()
        #expect(try mode(store) == 0o755, "a read-only open changed the folder")
        let writer = try DiskStore(directory: store, options: options())
        #expect(try mode(store) == 0o700)
        #expect(try writer.value(forKey: "k1") != nil)
        try writer.close()
    }

    /// `backup` (hard links where it can, copies otherwise) keeps the store's modes.
    @Test(arguments: [StorePermissions.ownerOnly, .groupReadable])
    func backupsKeepTheModes(_ permissions: StorePermissions) throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try fill(store, permissions: permissions)
        var o = options()
        o.permissions = permissions
        let open = try DiskStore(directory: store, options: o)
        try open.setValue(Data("after".utf8), forKey: "active")   // the active segment is copied, not linked
        _ = try open.backup(to: dir.file("copy"))
        try open.close()
        let found = try modes(dir.file("copy"))
        let folder = String(permissions.folderMode, radix: 8), file = String(permissions.fileMode, radix: 8)
        #expect(found.count > 2, "\(found)")
        #expect(found.allSatisfy { $0.key == "." ? $0.value == folder : $0.value == file }, "\(found)")
    }

    /// Another user (`nobody`) can neither read nor list a store made with the defaults, and
    /// the error names the path; the store is unchanged.
    @Test(.enabled(if: canRunAsNobody, "needs root to run cask as user nobody"))
    func anotherUserCannotReadAStoreMadeWithTheDefaults() throws {
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let dir = TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        let store = dir.file("store")
        try fill(store)
        let before = try directoryFingerprint(store)
        let asNobody = "setpriv --reuid=65534 --regid=65534 --clear-groups \(cask)"
        for verb in ["get \(store) k1", "ls \(store)", "stats \(store)"] {
            let (status, out) = try runShell("\(asNobody) \(verb)")
            #expect(status != 0, "\(verb): \(out)")
            #expect(out.contains(store) && out.contains("Permission denied"), "\(verb): \(out)")
        }
        let (status, out) = try runShell("cat \(store)/*.cask > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups cat \(store)/INDEX")
        #expect(status != 0 && out.contains("Permission denied"), "\(out)")
        #expect(try directoryFingerprint(store) == before)
    }
}
