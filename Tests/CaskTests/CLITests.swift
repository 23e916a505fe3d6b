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
        #expect(try runCask(["trim", dir.path, "--count", "0"]).0 == 0)
        #expect(try runCask(["get", dir.path, "greeting"]).0 == 1)
        #expect(try runCask(["trim", dir.path]).0 == 64)   // ArgumentParser's usage error
    }

    @Test func verifyReportsDamageWithOffsetsAndRepairFixesATornTail() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try DiskStore(directory: dir.path, options: options(segmentSize: 4096))
            for i in 0..<100 { try store.setValue(Data(repeating: UInt8(i), count: 90), forKey: "k\(i)") }
            try store.close()
        }
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
    }
}
