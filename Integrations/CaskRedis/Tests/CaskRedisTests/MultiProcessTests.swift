import CaskIntegrationTesting
import Foundation
import Testing

/// Separate node processes on one real Redis: what one node changes reaches the other's memory
/// and disk, a node killed with changes queued during an outage sends them after its restart.
@Suite struct MultiProcessTests {
    @Test func aWriteAndARemovalOnOneProcessReachTheOther() async throws {
        let server = try RedisServer(), folder = try Folder()
        let a = try NodeProcess(directory: folder.file("a"), port: server.port, id: 1)
        let b = try NodeProcess(directory: folder.file("b"), port: server.port, id: 2)
        #expect(await a.settled()); #expect(await b.settled())
        #expect(await a.send("set k v1") == "ok")
        // Read through, cold, and kept on b's disk (a read that overlapped a's change notice
        // keeps no copy: the next one does).
        #expect(await eventually(5) {
            let read = await b.send("get k"), kept = await b.send("local k")
            return read == "value v1" && kept == "true"
        })
        #expect(await a.send("set k v2") == "ok")
        #expect(await eventually(5) { await b.send("local k") == "false" })        // b's copy removed
        #expect(await b.send("get k") == "value v2")
        #expect(await a.send("load t:1 team v") == "value v")
        #expect(await eventually(5) { await b.send("get t:1") == "value v" })
        #expect(await a.send("tag team") == "ok")
        #expect(await eventually(5) { await b.send("local t:1") == "false" })
        #expect(await a.send("del k") == "ok")
        #expect(await eventually(5) { await b.send("local k") == "false" })
        b.kill()
        try b.start()
        #expect(await b.settled())
        #expect(await b.send("get k") == "nil")
        #expect(await b.send("get t:1") == "nil")
    }

    @Test func changesQueuedDuringAnOutageSurviveAKilledNode() async throws {
        let server = try RedisServer(), folder = try Folder()
        let a = try NodeProcess(directory: folder.file("a"), port: server.port, id: 1)
        let b = try NodeProcess(directory: folder.file("b"), port: server.port, id: 2)
        #expect(await a.settled()); #expect(await b.settled())
        server.kill()
        for i in 0..<10 { #expect(await a.send("set q\(i) x\(i)") == "ok") }   // acknowledged, queued on disk
        #expect(await a.send("del q3") == "ok")
        a.kill()                                                             // kill -9 with the queue unsent
        try server.start()                                                   // back, empty
        try a.start()
        #expect(await a.settled())                                           // the queue was sent
        #expect(await b.settled())
        for i in 0..<10 where i != 3 { #expect(await b.send("get q\(i)") == "value x\(i)", "q\(i)") }
        #expect(await b.send("get q3") == "nil")
    }

    /// One load per key across processes: a second node waits for the first one's value; when
    /// the node loading is killed with SIGKILL, the other loads itself once the lease (1 s in
    /// `cask-redis-node`) has passed.
    @Test func aKeyIsLoadedOnceAndAKilledLoadersClaimPasses() async throws {
        let server = try RedisServer(), folder = try Folder()
        let a = try NodeProcess(directory: folder.file("a"), port: server.port, id: 1)
        let b = try NodeProcess(directory: folder.file("b"), port: server.port, id: 2)
        #expect(await a.settled()); #expect(await b.settled())
        let first = Task { await a.send("slowload k 500 from-a") }
        #expect(await eventually(5) { (try? server.cli("EXISTS", "cask:load:k")) == "1" }, "a claimed the load")
        #expect(await b.send("slowload k 0 from-b") == "value from-a", "b waited for a's value")
        #expect(await first.value == "value from-a")
        #expect(await b.send("stats").contains("fromOthers=1"))
        let doomed = Task { await a.send("slowload j 60000 from-a") }
        #expect(await eventually(5) { (try? server.cli("EXISTS", "cask:load:j")) == "1" }, "a claimed the load")
        a.kill()
        #expect(await doomed.value.hasPrefix("error"))
        let started = ContinuousClock.now
        #expect(await b.send("slowload j 0 from-b") == "value from-b", "b loaded once a's claim passed")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// From outside: a node run under libfiu (`fiu-run`), a fifth of its `fdatasync` calls
    /// failing with EIO and a tenth of its `pwrite` calls with ENOSPC, makes changes while Redis
    /// is down, and is killed with SIGKILL. Every change it acknowledged reaches another node
    /// once Redis is back and the node restarted without faults; a change it refused answered
    /// an error.
    @Test func acknowledgedChangesSurviveFailedSyncsAndWritesAndAKill() async throws {
        let server = try RedisServer(), folder = try Folder()
        let a = try NodeProcess(directory: folder.file("a"), port: server.port, id: 1)
        let b = try NodeProcess(directory: folder.file("b"), port: server.port, id: 2)
        #expect(await a.settled()); #expect(await b.settled())
        a.kill()
        a.underFiu = true
        try a.start()
        #expect(await a.settled())
        try a.inject(["enable_random name=posix/io/sync/fdatasync,probability=0.2,failinfo=5",
                      "enable_random name=posix/io/rw/pwrite,probability=0.1,failinfo=28"])
        server.kill()
        var acknowledged: [Int] = [], refused = 0
        for i in 0..<60 {
            let answer = await a.send("set f\(i) x\(i)")
            if answer == "ok" { acknowledged.append(i) } else {
                #expect(answer.hasPrefix("error"), "\(answer)")
                refused += 1
                if answer == "error the node exited" { break }
            }
        }
        print("under libfiu: \(acknowledged.count) changes acknowledged, \(refused) refused")
        #expect(refused > 0, "the faults were injected")
        #expect(acknowledged.count > 5, "some changes were acknowledged")
        a.kill()
        a.underFiu = false
        try server.start()
        try a.start()
        #expect(await a.settled(within: 60))
        #expect(await b.settled(within: 60))
        for i in acknowledged { #expect(await b.send("get f\(i)") == "value x\(i)", "f\(i) was acknowledged") }
    }

    /// A time to live set on one process holds on another: the copy read through keeps the
    /// writer's expiry, Redis drops the entry then too, and a cold process never serves it.
    @Test func aTimeToLiveHoldsAcrossProcesses() async throws {
        let server = try RedisServer(), folder = try Folder()
        let a = try NodeProcess(directory: folder.file("a"), port: server.port, id: 1)
        let b = try NodeProcess(directory: folder.file("b"), port: server.port, id: 2)
        #expect(await a.settled()); #expect(await b.settled())
        let written = ContinuousClock.now
        #expect(await a.send("set t v 3000") == "ok")                       // 3 s to live
        #expect(await b.settled())
        // Read through and kept (a read that overlapped a's change notice keeps no copy).
        #expect(await eventually(2) {
            let read = await b.send("get t"), kept = await b.send("local t")
            return read == "value v" && kept == "true"
        })
        let ttl = Int(try server.cli("PTTL", "cask:v:t")) ?? -9
        #expect(ttl > 0 && ttl <= 3000, "Redis keeps the entry until its expiry: PTTL \(ttl)")
        try await Task.sleep(until: written + .milliseconds(3_300))
        #expect(await a.send("get t") == "nil")
        #expect(await b.send("get t") == "nil")                             // b's copy expired too
        let c = try NodeProcess(directory: folder.file("c"), port: server.port, id: 3)
        #expect(await c.settled())
        #expect(await c.send("get t") == "nil")
        #expect(try server.cli("EXISTS", "cask:v:t") == "0")
    }
}
