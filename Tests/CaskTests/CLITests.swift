import Foundation
import Testing
@testable import Cask

/// Each `cask` verb's output and exit status, on good, damaged, locked and foreign directories.
@Suite struct CLITests {
    @Test func itemVerbsAndExitStatuses() throws {
        let dir = TemporaryDirectory()
        #expect(try runCask(["put", dir.path, "greeting", "hello"]).0 == 0)
        #expect(try runCask(["put", dir.path, "temp", "x", "--ttl", "3600", "--pin"]).0 == 0)
        let (getStatus, out, _) = try runCask(["get", dir.path, "greeting"])
        #expect(getStatus == 0 && out == "hello")
        let (missing, _, err) = try runCask(["get", dir.path, "nope"])
        #expect(missing == 1 && err.contains("no value for key nope"))
        let (lsStatus, ls, _) = try runCask(["ls", dir.path, "--json", "--sort", "key"])
        #expect(lsStatus == 0 && ls.contains("\"key\":\"greeting\"") && ls.contains("\"pinned\":true"))
        let (table, text, _) = try runCask(["ls", dir.path, "--prefix", "gr"])
        #expect(table == 0 && text.contains("greeting") && !text.contains("temp"))
        let (statsStatus, stats, _) = try runCask(["stats", dir.path, "--json"])
        #expect(statsStatus == 0 && stats.contains("\"items\" : 2"))
        #expect(try runCask(["unpin", dir.path, "temp"]).0 == 0)
        #expect(try runCask(["rm", dir.path, "temp"]).0 == 0)
        #expect(try runCask(["rm", dir.path, "temp"]).0 == 1)
        let (compactStatus, compacted, _) = try runCask(["compact", dir.path])
        #expect(compactStatus == 0 && compacted.contains("compacted"))
        var dumps = ""
        for path in try segmentPaths(dir.path) {
            let id = (path as NSString).lastPathComponent.prefix(10)
            let (dumpStatus, dump, _) = try runCask(["dump", dir.path, String(Int(id)!)])
            #expect(dumpStatus == 0 && dump.contains("OFFSET"))
            dumps += dump
        }
        #expect(dumps.contains("greeting"), "\(dumps)")
        // A trim that removes nothing rewrites no segment (it compacted every one). (The open
        // may start a new log segment, as any writing open after a compaction does.)
        let segments = { try folderDigest(dir.path).filter { $0.key.hasSuffix(".cask") } }
        let before = try segments()
        #expect(try runCask(["trim", dir.path, "--count", "1000"]).1.contains("removed 0 items"))
        #expect(try segments().filter { before[$0.key] != nil } == before)
        #expect(try runCask(["trim", dir.path, "--count", "0"]).0 == 0)
        #expect(try runCask(["get", dir.path, "greeting"]).0 == 1)
        #expect(try runCask(["trim", dir.path]).0 == 64)   // ArgumentParser's usage error
    }

    /// A closed store of `count` keys `k0`... holding 90 bytes of their number each.
    func fill(_ dir: TemporaryDirectory, count: Int, segmentSize: Int) throws {
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: segmentSize))
        for i in 0..<count { try store.setValue(Data(repeating: UInt8(i), count: 90), forKey: "k\(i)") }
        try store.close()
    }

    @Test func verifyReportsDamageWithOffsetsAndRepairFixesATornTail() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 100, segmentSize: 4096)
        #expect(try runCask(["verify", dir.path]).0 == 0)
        let segments = try segmentPaths(dir.path)
        // A torn tail on the newest segment: reported, not an error; repaired by --repair.
        let newest = segments.last!
        let h = try Foundation.FileHandle(forWritingTo: URL(fileURLWithPath: newest))
        try h.seekToEnd(); try h.write(contentsOf: Data([1, 2, 3, 4, 5])); try h.close()
        let (tornStatus, torn, _) = try runCask(["verify", dir.path])
        #expect(torn.contains("torn tail"))
        // What a crash leaves, not damage: the newest segment has no hint to contradict (a clean
        // close leaves the index snapshot instead, which no longer matches and is ignored).
        #expect(tornStatus == 0)
        let (repairStatus, repaired, _) = try runCask(["verify", dir.path, "--repair"])
        #expect(repairStatus == 0 && repaired.contains("cut 5 torn-tail bytes"), "\(repaired)")
        // Damage inside a sealed segment: exit 1, file and offset named.
        try flipByte(segments[0], at: 200)
        let (damagedStatus, damaged, _) = try runCask(["verify", dir.path])
        #expect(damagedStatus == 1)
        #expect(damaged.contains("DAMAGED \(segments[0]):"), "\(damaged)")
    }

    /// Damage that open finds in a segment tail changed since the index snapshot is logged with
    /// each damaged record's key, file and offset (the message said only "records at the end of
    /// a segment are damaged").
    @Test func damageFoundAtOpenNamesTheKeyTheFileAndTheOffset() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 100, segmentSize: 4096)
        let newest = try segmentPaths(dir.path).last!
        try flipByte(newest, at: 200)   // inside the second record's value
        let (status, _, err) = try runCask(["ls", dir.path])
        #expect(status == 0 && err.contains("failed their checksum") && err.contains("key \"k") && err.contains("at \(newest):"), "\(err)")
    }

    /// `ls` lists from the index and the records' headers without reading values (its help
    /// says so): a key whose value is damaged in a sealed segment is listed, and `get` then
    /// finds the damage.
    @Test func lsListsAKeyWhoseValueIsDamagedAndGetFindsIt() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 250, segmentSize: 64 << 10)   // k1 early in the segment, before the last 4 KiB that open checks
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 64 << 10))
        let (segment, offset, size) = try #require(recordLocations(store)["k1"])
        try store.close()
        try flipByte(dir.file(FileNames.segment(segment)), at: offset + size - 1)   // the value's last byte
        let (_, listed, _) = try runCask(["ls", dir.path, "--prefix", "k1", "--json"])
        #expect(listed.contains("\"k1\""), "\(listed)")
        let (status, _, err) = try runCask(["get", dir.path, "k1"])
        // Damage is not "no such key" (1): status 3, naming the repair (issue 41).
        #expect(status == 3 && err.contains("k1") && err.contains("failed its checksum") && err.contains("nothing was written")
                && err.contains("cask verify \(dir.path) --repair"), "\(err)")
    }

    /// `dump --json` lists the damaged ranges among the records, in file order, as the text
    /// output does (it left them out).
    @Test func dumpJSONListsDamagedRangesInFileOrder() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 40, segmentSize: 64 << 10)
        try flipByte(try segmentPaths(dir.path)[0], at: 200)
        let (status, out, _) = try runCask(["dump", dir.path, "1", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[String: Any]])
        let offsets = items.compactMap { $0["offset"] as? Int }
        let damaged = items.filter { $0["kind"] as? String == "damaged" }
        #expect(status == 0 && offsets == offsets.sorted() && offsets.count == items.count)
        #expect(damaged.count == 1 && (damaged.first?["size"] as? Int ?? 0) > 0 && damaged.first?["reason"] is String, "\(damaged)")
        #expect(items.filter { $0["kind"] as? String == "value" }.count == 39)
        // A damaged segment header is listed too, at offset 0.
        try flipByte(try segmentPaths(dir.path)[0], at: 2)
        let (_, headerOut, _) = try runCask(["dump", dir.path, "1", "--json"])
        let headerItems = try #require(try JSONSerialization.jsonObject(with: Data(headerOut.utf8)) as? [[String: Any]])
        #expect(headerItems.first?["kind"] as? String == "damaged" && headerItems.first?["offset"] as? Int == 0, "\(headerItems.prefix(2))")
    }

    /// `dump` of a segment that compaction removed says so, lists the segments the store holds
    /// and exits 1 (the answer is no); it said only "the path does not exist" with status 3.
    /// A folder that is no store is still status 3. Nothing is written.
    @Test func dumpOfARemovedSegmentListsTheSegmentsThatExist() throws {
        let dir = TemporaryDirectory()
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        for round in 0..<2 { for i in 0..<60 { try store.setValue(Data(repeating: UInt8(round), count: 90), forKey: "k\(i)") } }
        try store.compact()
        try store.close()
        let ids = try segmentPaths(dir.path).map { String(Int((($0 as NSString).lastPathComponent).prefix(10))!) }
        #expect(!ids.contains("1"), "\(ids)")
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let (status, out, err) = try runCask(["dump", dir.path, "1"])
        #expect(status == 1 && out.isEmpty && err.contains("segment 1 is not in the store at \(dir.path)") && err.contains("compaction"), "\(err)")
        #expect(err.contains("holds segments " + ids.prefix(20).joined(separator: ", ")) && err.contains("cask stats \(dir.path)"), "\(ids) \(err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == before)
        let (noStore, _, why) = try runCask(["dump", dir.file("absent"), "1"])
        #expect(noStore == 3 && why.contains("no store at \(dir.file("absent"))"), "\(why)")
    }

    /// `verify` checks the index snapshot: a damaged one is a problem (status 1, it was not
    /// looked at) that `--repair` removes; one that describes other segments is a leftover.
    @Test func verifyChecksTheIndexSnapshot() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 50, segmentSize: 4096)
        let index = dir.file("INDEX")
        let earlier = try Data(contentsOf: URL(fileURLWithPath: index))
        try flipByte(index, at: 70)
        let (status, out, _) = try runCask(["verify", dir.path])
        #expect(status == 1 && out.contains("DAMAGED \(index):0: index snapshot damaged"), "\(out)")
        #expect(try runCask(["verify", dir.path, "--repair"]).0 == 0)
        #expect(try runCask(["verify", dir.path]).0 == 0)
        #expect(try runCask(["put", dir.path, "another", "value"]).0 == 0)
        try earlier.write(to: URL(fileURLWithPath: index))
        let (staleStatus, stale, _) = try runCask(["verify", dir.path])
        #expect(staleStatus == 0 && stale.contains("leftover") && stale.contains(index) && !stale.contains("DAMAGED"), "\(stale)")
        #expect(try runCask(["get", dir.path, "k7"]).0 == 0)
    }

    /// A segment cut shorter than the index snapshot recorded at the last clean close lost
    /// records (segments only grow, or go away whole): `verify` says so with status 1 (it
    /// called the snapshot one "of other segments" and exited 0, while deleted keys came back).
    @Test func verifyReportsASegmentShorterThanTheSnapshotSaw() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 100, segmentSize: 64 << 10)
        let newest = try segmentPaths(dir.path).last!
        let size = try #require(try FileManager.default.attributesOfItem(atPath: newest)[.size] as? Int)
        try truncateFile(newest, to: size - 100)
        let (status, out, _) = try runCask(["verify", dir.path])
        #expect(status == 1 && out.contains("DAMAGED \(newest):\(size - 100): segment is 100 bytes shorter"), "\(out)")
    }

    /// Where `repairRemovesDamageAndKeepsEveryGoodRecord` flips a byte.
    enum DamagePlace: String, CaseIterable, CustomStringConvertible {
        /// A sealed segment (4 KiB segments).
        case sealed
        /// The newest segment, within the last 4 KiB its index-snapshot mark checks.
        case newestTail
        /// The newest segment, before those last 4 KiB (one 64 KiB segment).
        case newestMiddle
        var description: String { rawValue }
    }

    /// `verify --repair` removes damage from a cleanly closed store (whose index snapshot hides
    /// most of it from open): the damaged record's key goes, every other key keeps its value,
    /// and the segment is rewritten, so the next `verify` is clean, wherever the damage lay: in
    /// a sealed segment, in the newest one's checked tail, or earlier in the newest one (which
    /// repair seals first; that damage used to stay, listed as a torn tail that a recovery
    /// without the snapshot would cut with every record after it).
    @Test(arguments: DamagePlace.allCases)
    func repairRemovesDamageAndKeepsEveryGoodRecord(_ place: DamagePlace) throws {
        let dir = TemporaryDirectory()
        let segmentSize = place == .newestMiddle ? 64 << 10 : 4096
        try fill(dir, count: 200, segmentSize: segmentSize)
        let segments = try segmentPaths(dir.path)
        try flipByte(place == .sealed ? segments[2] : segments.last!, at: 200)   // inside the second record's value
        let (before, found, _) = try runCask(["verify", dir.path])
        #expect(before == 1 && found.contains("DAMAGED"), "\(found)")
        if place != .sealed { #expect(found.contains("which a recovery after a crash would cut"), "\(found)") }
        let (status, out, err) = try runCask(["verify", dir.path, "--repair"])
        #expect(status == 0 && out.contains("1 keys dropped") && out.contains("199 keys remain") && out.hasSuffix("OK\n"), "\(out) \(err)")
        let (again, checked, _) = try runCask(["verify", dir.path])
        #expect(again == 0 && !checked.contains("DAMAGED"), "\(checked)")
        #expect(!checked.contains("torn tail"), "\(checked)")
        // What a crash would leave: no snapshot. Recovery scans, and still finds every good value.
        try removeIndexSnapshot(dir.path)
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: segmentSize))
        defer { try? store.close() }
        var missing: [Int] = []
        for i in 0..<200 {
            if let value = try store.value(forKey: "k\(i)") {
                #expect(value == Data(repeating: UInt8(i), count: 90), "k\(i)")
            } else {
                missing.append(i)
            }
        }
        #expect(missing.count == 1, "\(missing)")
    }

    /// `verify --repair` replaces a hint file that fails its checks; every value stays.
    @Test func repairReplacesADamagedHintFile() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 200, segmentSize: 4096)
        let hint = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }.sorted().first)
        try flipByte(dir.file(hint), at: 40)
        #expect(try runCask(["verify", dir.path]).0 == 1)
        let (status, out, err) = try runCask(["verify", dir.path, "--repair"])
        #expect(status == 0 && out.contains("removed 1 damaged hint files") && out.contains("0 keys dropped"), "\(out) \(err)")
        #expect(FileManager.default.fileExists(atPath: dir.file(hint)))
        #expect(try runCask(["verify", dir.path]).0 == 0)
        let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
        defer { try? store.close() }
        for i in 0..<200 { #expect(try store.value(forKey: "k\(i)") == Data(repeating: UInt8(i), count: 90)) }
    }

    /// `verify --repair` that may not remove a damaged hint file (run as nobody) names the file,
    /// the error and its errno (it printed Foundation's text, without the errno), and keeps it.
    @Test(.enabled(if: canRunAsNobody, "needs root to run cask as user nobody"))
    func repairThatCannotRemoveADamagedHintNamesTheErrno() throws {
        let dir = TemporaryDirectory()
        try fill(dir, count: 200, segmentSize: 4096)
        let hint = dir.file(try #require(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }.sorted().first))
        try flipByte(hint, at: 40)
        try letOthersRead(dir.path)
        guard let cask = caskExecutable() else { Issue.record("cask not built"); return }
        let (_, out) = try runShell("setpriv --reuid=65534 --regid=65534 --clear-groups \(cask) verify \(dir.path) --repair; echo \" status=$?\"")
        #expect(out.contains("status=3") && out.contains("cannot remove the damaged hint file \(hint): Permission denied (errno 13)")
                && out.contains("permissions"), "\(out)")
        #expect(FileManager.default.fileExists(atPath: hint))
    }

    @Test func foreignAndMissingDirectoriesAreRefusedWithoutChanges() throws {
        let dir = TemporaryDirectory()
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir.file("notes.txt")))
        for verb in [["ls", dir.path], ["verify", dir.path], ["put", dir.path, "k", "v"], ["stats", dir.path]] {
            let (status, _, err) = try runCask(verb)
            #expect(status == 3 && err.contains("not a Cask store"), "\(verb): \(err)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["notes.txt"])
        let (status, _, err) = try runCask(["ls", dir.file("nothing-here")])
        #expect(status == 3 && err.contains("no store at"))
        // An empty folder: the message names the command that creates a store, not library options.
        let empty = dir.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let (emptyStatus, _, emptyErr) = try runCask(["ls", empty])
        #expect(emptyStatus == 3 && emptyErr.contains("no store at \(empty): the folder is empty") && emptyErr.contains("cask put \(empty) KEY VALUE")
                && !emptyErr.contains("isReadOnly"), "\(emptyErr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
    }
}
