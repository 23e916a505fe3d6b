import Foundation
import Testing
@testable import Cask

/// The `cask` tool's key files (`CASK_KEY_FILE`): good ones open and rotate a store; every bad
/// list or file is refused with the path and the fix, before the store is opened, never a trap.
@Suite struct KeyFileTests {
    let key1 = testKey(1)
    let key2 = testKey(2)

    /// The `cask` tool reads keys from the files `CASK_KEY_FILE` names (hex or raw, current
    /// first), refuses a store without its key and a file that is not a key with the fix (a key
    /// file that cannot be read: its errno, and 74 when the read itself failed), and rotates a
    /// store's key with `compact`.
    @Test func theCaskToolTakesKeysFromKeyFiles() throws {
        guard let tool = caskExecutable() else { Issue.record("cask not built"); return }
        let dir = TemporaryDirectory(), keys = TemporaryDirectory()
        let hex = key1.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        try Data((hex + "\n").utf8).write(to: URL(fileURLWithPath: keys.file("one")))
        try key2.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: keys.file("two")))
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: keys.file("bad")))
        let store = dir.file("store")
        func run(_ keyFile: String?, _ arguments: String) throws -> (Int32, String) {
            try runShell((keyFile.map { "CASK_KEY_FILE='\($0)' " } ?? "") + "\(tool) \(arguments)")
        }
        #expect(try run(keys.file("one"), "put \(store) k secret").0 == 0)
        #expect(try run(keys.file("one"), "get \(store) k") == (0, "secret"))
        let before = try folderDigest(store).filter { $0.key != "LOCK" }
        let none = try run(nil, "get \(store) k")
        #expect(none.0 == 3 && none.1.contains("is encrypted") && none.1.contains("CASK_KEY_FILE"), "\(none)")
        let wrong = try run(keys.file("two"), "put \(store) k other")
        #expect(wrong.0 == 3 && wrong.1.contains("none of the keys given"), "\(wrong)")
        let bad = try run(keys.file("bad"), "get \(store) k")
        #expect(bad.0 == 64 && bad.1.contains("is not a key") && bad.1.contains(keys.file("bad")), "\(bad)")
        let missing = try run(keys.file("gone"), "get \(store) k")
        #expect(missing.0 == 64 && missing.1.contains("cannot open the key file \(keys.file("gone")): No such file or directory (errno 2)"), "\(missing)")
        let folder = try run(keys.path, "get \(store) k")
        #expect(folder.0 == 64 && folder.1.contains("\(keys.path) is not a regular file"), "\(folder)")
        if fiuRunIsInstalled {   // read(2) failing with EIO is an I/O error (74), never a usage error (64)
            let fiu = "fiu-run -f '' -x -c 'enable name=posix/io/rw/read,failinfo=5'"
            let failed = try runShell("CASK_KEY_FILE='\(keys.file("one"))' \(fiu) \(tool) get \(store) k; echo \" status=$?\"")
            #expect(failed.1.contains("status=74") && failed.1.contains("cannot read the key file \(keys.file("one")): Input/output error (errno 5)")
                    && failed.1.contains("check the disk"), "\(failed)")
        }
        #expect(try folderDigest(store).filter { $0.key != "LOCK" } == before, "a refused command changed the store")
        // Rotation: key two current, key one previous; compact re-seals; key two alone reads it.
        #expect(try run("\(keys.file("two")):\(keys.file("one"))", "compact \(store)").0 == 0)
        let stats = try run(keys.file("two"), "stats \(store) --json")
        #expect(stats.0 == 0 && stats.1.contains(StoreEncryption.keyIDText(StoreEncryption.keyID(of: key2))), "\(stats)")
        #expect(!stats.1.contains(StoreEncryption.keyIDText(StoreEncryption.keyID(of: key1))), "\(stats)")
        #expect(try run(keys.file("two"), "get \(store) k") == (0, "secret"))
        #expect(try run(keys.file("two"), "verify \(store)").0 == 0)
    }

    /// Bad key lists and files: each exits 64 naming what is wrong, and the store is untouched.
    /// (An empty entry trapped: "Index out of range"; /dev/zero was read until memory ran out;
    /// 32 hex digits were taken as a raw key, and a leading "+" as a hex digit; devices and
    /// folders are refused before any read, as a FIFO must be.)
    @Test(arguments: [
        (":", "has an empty entry"), ("::", "has an empty entry"), ("ONE::ONE", "has an empty entry"),
        ("ONE:", "has an empty entry"), (":ONE", "has an empty entry"), ("/dev/zero", "is not a regular file"),
        ("/dev/null", "is not a regular file"), ("HALF", "is not a key"), ("PLUS", "is not a key"), ("DIR", "is not a regular file"),
    ])
    func badKeyListsAreRefusedBeforeTheStoreIsOpened(list: String, says: String) throws {
        guard let tool = caskExecutable() else { Issue.record("cask not built"); return }
        let dir = TemporaryDirectory(), keys = TemporaryDirectory()
        let hex = key1.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        try Data(hex.utf8).write(to: URL(fileURLWithPath: keys.file("one")))
        try Data(hex.prefix(32).utf8).write(to: URL(fileURLWithPath: keys.file("half")))
        try Data(("+1" + hex.dropFirst(2)).utf8).write(to: URL(fileURLWithPath: keys.file("plus")))
        let store = dir.file("store")
        #expect(try runShell("CASK_KEY_FILE='\(keys.file("one"))' \(tool) put \(store) k v").0 == 0)
        let before = try folderDigest(store)
        let setting = list.replacingOccurrences(of: "ONE", with: keys.file("one")).replacingOccurrences(of: "HALF", with: keys.file("half"))
            .replacingOccurrences(of: "PLUS", with: keys.file("plus")).replacingOccurrences(of: "DIR", with: keys.path)
        let (status, out) = try runShell("CASK_KEY_FILE='\(setting)' \(tool) get \(store) k")
        #expect(status == 64 && out.contains(says) && out.hasPrefix("cask: CASK_KEY_FILE") && !out.contains("Fatal error"), "\(list): \(status) \(out)")
        #expect(try folderDigest(store) == before)
    }

    /// `cask verify` given a key for an unencrypted store refuses it as every other verb does
    /// (it reported every record as damage, exit 1).
    @Test func verifyWithAKeyForAnUnencryptedStoreRefusesIt() throws {
        guard let tool = caskExecutable() else { Issue.record("cask not built"); return }
        let dir = TemporaryDirectory(), keys = TemporaryDirectory()
        try key1.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: keys.file("one")))
        #expect(try runCask(["put", dir.path, "k", "v"]).0 == 0)
        let (status, out) = try runShell("CASK_KEY_FILE='\(keys.file("one"))' \(tool) verify \(dir.path)")
        #expect(status == 3 && out.contains("holds unencrypted records") && !out.contains("DAMAGED"), "\(out)")
    }
}
