import CaskFormat
import Foundation
import Testing
@testable import Cask

/// Files someone else wrote (issue 41): numbers out of any writer's range, links, FIFOs and
/// loose modes never trap, hang, write outside the store, or vouch for what they hold. Each
/// test goes through the library and through the `cask` binary.
@Suite struct HostileFileTests {
    /// A closed store of keys k0...k(count-1), each holding `valueSize` bytes of its number.
    func filledStore(_ dir: TemporaryDirectory, count: Int = 10, valueSize: Int = 90, segmentSize: Int = 64 << 20) throws {
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: segmentSize))
        for i in 0..<count { try store.setValue(Data(repeating: UInt8(i), count: valueSize), forKey: "k\(i)") }
        try store.close()
    }

    @Test(arguments: [UInt64.max, UInt64.max - 1, 1 << 63, Format.maximumSequence + 1])
    func aSequenceNoWriterCouldIssueIsDamageNotATrap(sequence: UInt64) throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        try appendForgedRecord(to: try segmentPaths(dir.path).last!, sequence: sequence, key: "k0")
        // Readers: the forged tombstone is damage, not a newer record of k0.
        for verb in [["get", dir.path, "k0"], ["ls", dir.path], ["stats", dir.path]] {
            let (status, _, err) = try runCask(verb)
            #expect(status == 0, "\(verb[0]): \(status) \(err)")
        }
        // Verify says what an open does with it: the newest segment's tail from the first
        // invalid record on is cut (format-spec.md, "Recovery on open", step 6).
        let (_, report, _) = try runCask(["verify", dir.path])
        #expect(report.contains("torn tail (cut at the next open)") && report.contains("sequence number \(sequence) out of range"), "\(report)")
        // A writer cuts it, and goes on numbering from the store's own records.
        #expect(try runCask(["put", dir.path, "k1", "new"]).0 == 0)
        #expect(try runCask(["verify", dir.path]).0 == 0)
        let store = try DiskStore(directory: dir.path, options: options())
        #expect(try store.value(forKey: "k0") == Data(repeating: 0, count: 90))
        #expect(try store.value(forKey: "k1") == Data("new".utf8))
        try store.setValue(Data("again".utf8), forKey: "k0")
        try store.close()
    }

    @Test func aForgedSequenceInsideASealedSegmentIsRepairedAndEveryIntactKeyKept() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir, count: 100, segmentSize: 4096)
        let first = try segmentPaths(dir.path).first!
        try tamperRecord(first, at: Format.segmentHeaderSize) { record in
            for n in 4..<12 { record[n] = 0xFF }   // sequence 2^64 - 1
        }
        try removeIndexSnapshot(dir.path)
        let (verify, report, _) = try runCask(["verify", dir.path])
        #expect(verify == 1 && report.contains("out of range"), "\(report)")
        // The open agrees: a writer opens and writes (it once refused: "no sequence numbers left").
        let (put, _, putErr) = try runCask(["put", dir.path, "fresh", "v"])
        #expect(put == 0, "\(putErr)")
        let (repair, _, repairErr) = try runCask(["verify", dir.path, "--repair"])
        #expect(repair == 0, "\(repairErr)")
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        #expect(store.count == 100)   // k1...k99 and "fresh": only the damaged k0 is gone
        for i in 1..<100 { #expect(try store.value(forKey: "k\(i)") == Data(repeating: UInt8(i), count: 90)) }
        try store.setValue(Data("x".utf8), forKey: "k0")
        try store.close()
    }

    @Test func aRecordAtTheLastSequenceLeavesAStoreThatSaysWhatToDo() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        try appendForgedRecord(to: try segmentPaths(dir.path).last!, sequence: Format.maximumSequence, key: "k0")
        #expect(try runCask(["get", dir.path, "k1"]).0 == 0)
        let (put, _, err) = try runCask(["put", dir.path, "k1", "v"])
        #expect(put == 3 && err.contains("no sequence numbers are left") && err.contains("remove the store's folder"), "\(err)")
        // Verify agrees with the open: it reports the record, and the repair says the same fix.
        let (verify, out, _) = try runCask(["verify", dir.path])
        #expect(verify == 1 && out.contains("claims sequence number \(Format.maximumSequence)"), "\(out)")
        let (repair, _, repairErr) = try runCask(["verify", dir.path, "--repair"])
        #expect(repair == 3 && repairErr.contains("remove the store's folder"), "\(repairErr)")
        #expect(try runCask(["get", dir.path, "k2"]).0 == 0, "reads still work")
    }

    @Test func aLockFileThatIsASymbolicLinkIsNeverFollowed() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        let outside = TemporaryDirectory()
        let target = outside.file("precious")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: target))
        try FileManager.default.removeItem(atPath: dir.file("LOCK"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("LOCK"), withDestinationPath: target)
        for verb in [["put", dir.path, "k0", "v"], ["compact", dir.path], ["verify", dir.path, "--repair"], ["rm", dir.path, "k1"]] {
            let (status, _, err) = try runCask(verb)
            #expect(status == 3 && err.contains("symbolic link"), "\(verb[0]): \(status) \(err)")
        }
        #expect(throws: CaskError.self) { try DiskStore(directory: dir.path, options: options()) }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious")
    }

    @Test func aSegmentThatIsASymbolicLinkIsNeitherReadNorWritten() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        let outside = TemporaryDirectory()
        let newest = try segmentPaths(dir.path).last!
        let moved = outside.file("segment")
        try FileManager.default.moveItem(atPath: newest, toPath: moved)
        try FileManager.default.createSymbolicLink(atPath: newest, withDestinationPath: moved)
        let before = try Data(contentsOf: URL(fileURLWithPath: moved))
        for verb in [["put", dir.path, "k0", "v"], ["get", dir.path, "k0"], ["verify", dir.path], ["dump", dir.path, "1"]] {
            let (status, _, err) = try runCask(verb)
            #expect(status == 3 && err.contains("symbolic link"), "\(verb[0]): \(status) \(err)")
        }
        let refusal = #expect(throws: CaskError.self) { try DiskStore(directory: dir.path, options: options()) }
        #expect(refusal.map { "\($0)" }?.contains("\(newest) is a symbolic link") == true, "\(String(describing: refusal))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: moved)) == before)
    }

    @Test func aFIFOInAStoreFilesPlaceIsRefusedWithoutBlocking() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        try FileManager.default.removeItem(atPath: dir.file("LOCK"))
        #expect(mkfifo(dir.file("LOCK"), 0o600) == 0)
        let (status, _, err) = try runCask(["put", dir.path, "k0", "v"], timeout: 30)
        #expect(status == 3 && err.contains("not a regular file"), "\(err)")
    }

    @Test func keysAreGivenOnPurpose() throws {
        let dir = TemporaryDirectory()
        let fifo = dir.file("key.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let store = dir.file("store")
        for (value, says) in [("", "set but empty"), (fifo, "not a regular file"), ("/dev/null", "not a regular file"), (dir.path, "not a regular file")] {
            for verb in [["put", store, "k", "v"], ["verify", store], ["get", store, "k"]] {
                let (status, _, err) = try runCask(verb, environment: ["CASK_KEY_FILE": value], timeout: 30)
                #expect(status == 64 && err.contains(says), "CASK_KEY_FILE=\(value) \(verb[0]): \(status) \(err)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: store), "a refused key wrote a plaintext store")
    }

    @Test(arguments: ["folder", "segment"])
    func verifyAndDumpRefuseWhatOthersMayWrite(_ what: String) throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        let path = what == "folder" ? dir.path : try segmentPaths(dir.path).last!
        #expect(chmod(path, what == "folder" ? 0o777 : 0o666) == 0)
        for verb in [["verify", dir.path], ["dump", dir.path, "1"], ["get", dir.path, "k0"]] {
            let (status, _, err) = try runCask(verb)
            #expect(status == 3 && err.contains("chmod go-w"), "\(verb[0]): \(status) \(err)")
        }
        #expect(throws: CaskError.self) { try StoreVerifier(directory: dir.path).verify() }
    }

    /// A reader whose newest segment is cut by another process (a writer's open cutting a torn
    /// tail) reads on: no SIGBUS (before, this killed the test process).
    @Test func aReaderSurvivesItsNewestSegmentBeingCut() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir, count: 64, valueSize: 4096)
        var readOnly = options()
        readOnly.isReadOnly = true
        let reader = try DiskStore(directory: dir.path, options: readOnly)
        try truncateFile(try segmentPaths(dir.path).last!, to: Format.segmentHeaderSize)
        var answered = 0
        for i in 0..<64 {
            // A value whose bytes are gone is an error or a miss, never a crash or wrong bytes.
            if let value = try? reader.value(forKey: "k\(i)") {
                #expect(value == Data(repeating: UInt8(i), count: 4096))
                answered += 1
            }
        }
        #expect(answered < 64)
        try reader.close()
    }

    @Test func everyVerbSaysTheSameAboutAMissingStore() throws {
        let dir = TemporaryDirectory()
        let missing = dir.file("nothing-here")
        var messages: Set<String> = []
        for verb in [["get", missing, "k"], ["ls", missing], ["stats", missing], ["verify", missing], ["dump", missing, "1"], ["rm", missing, "k"]] {
            let (status, _, err) = try runCask(verb)
            #expect(status == 3, "\(verb[0]): \(status) \(err)")
            messages.insert(err.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(messages.count == 1, "\(messages)")
        #expect(messages.first?.contains("cask put \(missing) KEY VALUE") == true)
    }

    @Test func damageIsNotAMissingKeyAndVerifyNamesTheRepair() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir, count: 100, segmentSize: 4096)
        let sealed = try segmentPaths(dir.path).first!
        try flipByte(sealed, at: Format.segmentHeaderSize + Format.recordHeaderSize + 4)   // k0's value
        let (get, _, getErr) = try runCask(["get", dir.path, "k0"])
        #expect(get == 3 && getErr.contains("--repair"), "\(getErr)")
        let (verify, out, err) = try runCask(["verify", dir.path])
        #expect(verify == 1 && out.contains("1 problem,") && err.contains("cask verify \(dir.path) --repair"), "\(out) \(err)")
        #expect(try runCask(["get", dir.path, "k1"]).0 == 0)
    }

    /// A newest segment holding only a header that does not parse (a rollover cut short):
    /// verify reports what the open does (removes it), instead of refusing the store.
    @Test func verifyAgreesWithTheOpenOnAnUnfinishedNewestSegment() throws {
        let dir = TemporaryDirectory()
        try filledStore(dir)
        let newest = try segmentPaths(dir.path).last!
        var header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: newest)).prefix(Format.segmentHeaderSize))
        header[0] ^= 0xFF
        let id = Int((newest as NSString).lastPathComponent.prefix(10))! + 1
        let unfinished = dir.file(String(format: "%010d.cask", id))
        try Data(header).write(to: URL(fileURLWithPath: unfinished))
        let (verify, report, err) = try runCask(["verify", dir.path])
        #expect(verify == 0 && report.contains("leftover (removed at the next open): \(unfinished)"), "\(report) \(err)")
        #expect(try runCask(["get", dir.path, "k3"]).0 == 0)
        #expect(try runCask(["put", dir.path, "k3", "v"]).0 == 0)
        #expect(!FileManager.default.fileExists(atPath: unfinished))
    }

    /// A damaged segment header: `verify --repair` rewrites the segment (it used to keep
    /// reporting it), keeping every key; every verb then works.
    @Test(arguments: [false, true])
    func repairRewritesADamagedSegmentHeader(encrypted: Bool) throws {
        let dir = TemporaryDirectory()
        var o = encrypted ? try encryptedOptions(testKey(7), segmentSize: 4096) : options(segmentSize: 4096)
        let store = try DiskStore(directory: dir.path, options: o)
        for i in 0..<100 { try store.setValue(Data(repeating: UInt8(i), count: 90), forKey: "k\(i)") }
        try store.close()
        let first = try segmentPaths(dir.path).first!
        try flipByte(first, at: 20)   // inside the segment id: the header checksum fails
        var environment: [String: String] = [:]
        let keyFile = dir.file("store.key")
        if encrypted {
            try Data(testKey(7).withUnsafeBytes { Array($0) }).write(to: URL(fileURLWithPath: keyFile))
            environment["CASK_KEY_FILE"] = keyFile
        }
        let (before, report, _) = try runCask(["verify", dir.path], environment: environment)
        #expect(before == 1 && report.contains("segment header is damaged"), "\(report)")
        let (repair, _, err) = try runCask(["verify", dir.path, "--repair"], environment: environment)
        #expect(repair == 0, "\(err)")
        #expect(!FileManager.default.fileExists(atPath: first))
        o.compaction.isAutomatic = false
        let reopened = try DiskStore(directory: dir.path, options: o)
        #expect(reopened.count == 100)
        for i in 0..<100 { #expect(try reopened.value(forKey: "k\(i)") == Data(repeating: UInt8(i), count: 90)) }
        try reopened.setValue(Data("x".utf8), forKey: "new")
        try reopened.close()
    }
}
