import CaskRedis
import ExampleServer
import CaskIntegrationTesting
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The example server, started live on a loopback port and hit with real HTTP requests
/// (async-http-client).
@Suite struct ExampleServerTests {
    /// 100 concurrent requests for one cold user make one upstream call; once the user is past
    /// its fresh period and the upstream fails, the stale user is served, after a restart too;
    /// `/metrics` counts the load and the stale values served, and times each load.
    @Test func oneLoadPerKeyStaleDuringAnOutageAndMetrics() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        var settings = ServerSettings(folder: folder.path)
        settings.timeToLive = .milliseconds(300)
        let upstream = SlowUpstream(delay: .milliseconds(200))
        try await buildApplication(settings, upstream: upstream).test(.ahc(.http)) { client in
            let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 { group.addTask { String(buffer: try await client.execute(uri: "/users/7", method: .get).body) } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(upstream.callCount == 1, "upstream calls: \(upstream.callCount)")
            #expect(bodies == [#"{"id":7,"name":"user 7"}"#])
            try await Task.sleep(for: .milliseconds(400))   // past the fresh period
            upstream.isFailing = true
            try await client.execute(uri: "/users/7", method: .get) { response in
                #expect(response.status == .ok && response.headers[HTTPField.Name("X-Cache-Stale")!] == "true")
            }
            try await client.execute(uri: "/users/8", method: .get) { #expect($0.status == .internalServerError) }   // nothing stale to serve
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            let text = String(buffer: metrics.body)
            #expect(text.contains(#"cask_loads_total{cache="example"} 3"#), "\(text)")
            #expect(text.contains(#"cask_stale_served_total{cache="example"} 1"#), "\(text)")
            // Each load timed as it ended: the first succeeded; the refresh of 7 and the load of 8 failed.
            #expect(text.contains(#"cask_load_duration_seconds_count{cache="example",result="success"} 1"#), "\(text)")
            #expect(text.contains(#"cask_load_duration_seconds_count{cache="example",result="failure"} 2"#), "\(text)")
            #expect(text.contains(#"cask_sync_duration_seconds_bucket{cache="example",target="file",le="0.0001"}"#), "\(text)")
        }
        // A restart during the outage: the stale user is still served, from disk.
        try await buildApplication(settings, upstream: upstream).test(.ahc(.http)) { client in
            try await client.execute(uri: "/users/7", method: .get) { response in
                #expect(response.status == .ok && response.headers[HTTPField.Name("X-Cache-Stale")!] == "true")
                #expect(String(buffer: response.body) == #"{"id":7,"name":"user 7"}"#)
            }
        }
    }

    /// A session started before a restart is still there after it.
    @Test func sessionsSurviveARestart() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        let settings = ServerSettings(folder: folder.path)
        let upstream = SlowUpstream()
        let token = try await buildApplication(settings, upstream: upstream).test(.ahc(.http)) { client in
            let token = String(buffer: try await client.execute(uri: "/login/ada", method: .post).body)
            try await client.execute(uri: "/me", method: .get, headers: [HTTPField.Name("X-Session")!: token]) {
                #expect(String(buffer: $0.body) == "ada")
            }
            try await client.execute(uri: "/me", method: .get) { #expect($0.status == .unauthorized) }
            return token
        }
        try await buildApplication(settings, upstream: upstream).test(.ahc(.http)) { client in
            try await client.execute(uri: "/me", method: .get, headers: [HTTPField.Name("X-Session")!: token]) {
                #expect(String(buffer: $0.body) == "ada")
            }
        }
    }

    /// Two instances on one Redis: a user one loaded is served by the other without a load of
    /// its own, and a removal on one reaches the other's copies (it loads again).
    @Test func twoInstancesShareOneRedis() async throws {
        let redis = try RedisServer()
        let folderA = TestFolder(), folderB = TestFolder()
        defer { withExtendedLifetime((folderA, folderB, redis)) {} }
        var settingsA = ServerSettings(folder: folderA.path), settingsB = ServerSettings(folder: folderB.path)
        settingsA.redis = RedisConfiguration(host: "127.0.0.1", port: redis.port)
        settingsB.redis = settingsA.redis
        let a = settingsA, b = settingsB
        let upstreamA = SlowUpstream(delay: .milliseconds(10)), upstreamB = SlowUpstream(delay: .milliseconds(10))
        try await buildApplication(a, upstream: upstreamA).test(.ahc(.http)) { clientA in
            try await buildApplication(b, upstream: upstreamB).test(.ahc(.http)) { clientB in
                _ = try await clientA.execute(uri: "/users/7", method: .get)
                #expect(upstreamA.callCount == 1)
                var served = false
                for _ in 0..<200 where !served {   // until a's write reached Redis and b follows it
                    let body = String(buffer: try await clientB.execute(uri: "/users/7", method: .get).body)
                    served = body == #"{"id":7,"name":"user 7"}"# && upstreamB.callCount == 0
                    if !served { try await Task.sleep(for: .milliseconds(20)) }
                    if upstreamB.callCount > 0 { break }
                }
                #expect(served && upstreamB.callCount == 0, "b loaded it itself: \(upstreamB.callCount)")
                try await clientA.execute(uri: "/users/7", method: .delete) { #expect($0.status == .noContent) }
                var reloaded = false
                for _ in 0..<200 where !reloaded {
                    _ = try await clientB.execute(uri: "/users/7", method: .get)
                    reloaded = upstreamB.callCount == 1
                    if !reloaded { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(reloaded, "b still served its copy after a's removal")
            }
        }
    }
}
