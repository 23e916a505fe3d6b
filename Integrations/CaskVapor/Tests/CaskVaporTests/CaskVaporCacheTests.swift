import Cask
import CaskVapor
import CaskIntegrationTesting
import Foundation
import Testing
import VaporTesting

/// Routes over `req.cache`: `PUT /kv/:key?ttl=` stores the body, `GET /kv/:key` reads it (404
/// when absent), `DELETE /kv/:key` removes it (through `set(nil)`).
func configure(_ app: Application, folder: String) throws {
    app.caches.use(.cask(try CaskCache(directory: folder)))
    app.put("kv", ":key") { req async throws -> HTTPStatus in
        let key = try req.parameters.require("key")
        let body = req.body.string ?? ""
        let ttl: CacheExpirationTime? = req.query["ttl"].map { .seconds($0) }
        try await req.cache.set(key, to: body, expiresIn: ttl)
        return .ok
    }
    app.get("kv", ":key") { req async throws -> String in
        guard let value = try await req.cache.get(try req.parameters.require("key"), as: String.self) else { throw Abort(.notFound) }
        return value
    }
    app.delete("kv", ":key") { req async throws -> HTTPStatus in
        try await req.cache.delete(try req.parameters.require("key"))
        return .noContent
    }
}

@Suite struct CaskVaporCacheTests {
    /// A running application on a loopback port (real HTTP): values stored through `req.cache`
    /// survive a shutdown (which closes the store) and a new app on the same folder; an expiry
    /// set with `expiresIn` holds (Vapor's default implementation drops it).
    @Test func valuesSurviveARestartOfARunningApp() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        try await withApp(configure: { try configure($0, folder: folder.path) }) { app in
            let live = try app.testing(method: .running(port: 0))
            try await live.test(.PUT, "kv/session", body: ByteBuffer(string: "alice")) { #expect($0.status == .ok) }
            try await live.test(.PUT, "kv/brief?ttl=1", body: ByteBuffer(string: "soon gone")) { #expect($0.status == .ok) }
            try await live.test(.GET, "kv/session") { #expect($0.body.string == "alice") }
        }
        try await withApp(configure: { try configure($0, folder: folder.path) }) { app in
            let live = try app.testing(method: .running(port: 0))
            try await live.test(.GET, "kv/session") { #expect($0.body.string == "alice") }
            try await Task.sleep(for: .milliseconds(1_100))
            try await live.test(.GET, "kv/brief") { #expect($0.status == .notFound) }
            try await live.test(.DELETE, "kv/session") { #expect($0.status == .noContent) }
            try await live.test(.GET, "kv/session") { #expect($0.status == .notFound) }
        }
    }

    /// The driver itself, in memory: the async wrappers, set(nil) as removal, an expiry of
    /// zero seconds stores nothing, a wrong type fails and keeps the value, many concurrent
    /// writers and readers.
    @Test func theCacheAPI() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }
        try await withApp(configure: { try configure($0, folder: folder.path) }) { app in
            let cache = app.cache
            try await cache.set("n", to: 42)
            #expect(try await cache.get("n", as: Int.self) == 42)
            await #expect(throws: CaskError.self) { try await cache.get("n", as: [String].self) }
            #expect(try await cache.get("n", as: Int.self) == 42)
            try await cache.set("n", to: Int?.none)
            #expect(try await cache.get("n", as: Int.self) == nil)
            try await cache.set("z", to: "x", expiresIn: .seconds(0))
            #expect(try await cache.get("z", as: String.self) == nil)
            let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        try await app.cache.set("k\(i)", to: "v\(i)", expiresIn: .minutes(5))
                        return try await app.cache.get("k\(i)", as: String.self) == "v\(i)" ? 0 : 1
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(mismatches == 0)
        }
    }
}
