import Cask
import CaskHummingbird
import CaskIntegrationTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// A small app over a persist driver: `PUT /kv/:key` stores the body (with `?ttl=` seconds),
/// `POST /kv/:key` creates it (409 when it exists), `GET /kv/:key` reads it (404 when absent),
/// `DELETE /kv/:key` removes it.
func makeApp(_ persist: CaskPersistDriver) -> some ApplicationProtocol {
    let router = Router()
    router.put("/kv/:key") { request, context -> HTTPResponse.Status in
        let key = try context.parameters.require("key")
        let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
        let ttl = request.uri.queryParameters["ttl"].flatMap { Int(String($0)) }.map { Duration.seconds($0) }
        try await persist.set(key: key, value: body, expires: ttl)
        return .ok
    }
    router.post("/kv/:key") { request, context -> HTTPResponse.Status in
        let key = try context.parameters.require("key")
        let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
        do {
            try await persist.create(key: key, value: body, expires: nil)
            return .created
        } catch let error as PersistError where error == .duplicate {
            return .conflict
        }
    }
    router.get("/kv/:key") { _, context -> String in
        guard let value = try await persist.get(key: try context.parameters.require("key"), as: String.self) else {
            throw HTTPError(.notFound)
        }
        return value
    }
    router.delete("/kv/:key") { _, context -> HTTPResponse.Status in
        try await persist.remove(key: try context.parameters.require("key"))
        return .noContent
    }
    return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), services: [persist])
}

@Suite struct CaskPersistDriverTests {
    /// A live server on a loopback port, real HTTP requests (async-http-client); the app is
    /// stopped (graceful shutdown closes the store) and started again on the same folder, and
    /// the values are still there, with their expiry.
    @Test func valuesSurviveARestartOfALiveApp() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        try await makeApp(try CaskPersistDriver(directory: folder.path)).test(.ahc(.http)) { client in
            try await client.execute(uri: "/kv/session", method: .put, body: ByteBuffer(string: "alice")) { #expect($0.status == .ok) }
            try await client.execute(uri: "/kv/short?ttl=1", method: .put, body: ByteBuffer(string: "soon gone")) { #expect($0.status == .ok) }
            try await client.execute(uri: "/kv/session", method: .get) { #expect(String(buffer: $0.body) == "alice") }
        }
        let again = try CaskPersistDriver(directory: folder.path)   // opens: the first app closed the store
        try await makeApp(again).test(.ahc(.http)) { client in
            try await client.execute(uri: "/kv/session", method: .get) { #expect(String(buffer: $0.body) == "alice") }
            try await Task.sleep(for: .milliseconds(1_100))
            try await client.execute(uri: "/kv/short", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/kv/session", method: .delete) { #expect($0.status == .noContent) }
            try await client.execute(uri: "/kv/session", method: .get) { #expect($0.status == .notFound) }
        }
    }

    /// Many concurrent requests on a live server: 50 creates of one key, of which exactly one
    /// wins, and 200 writes and reads of distinct keys, each reading back its own value.
    @Test func concurrentRequestsOnALiveServer() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        try await makeApp(try CaskPersistDriver(directory: folder.path)).test(.ahc(.http)) { client in
            let created = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for i in 0..<50 {
                    group.addTask { try await client.execute(uri: "/kv/once", method: .post, body: ByteBuffer(string: "\(i)")).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(created.filter { $0 == .created }.count == 1 && created.filter { $0 == .conflict }.count == 49)
            let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        _ = try await client.execute(uri: "/kv/k\(i)", method: .put, body: ByteBuffer(string: "v\(i)"))
                        let back = try await client.execute(uri: "/kv/k\(i)", method: .get)
                        return String(buffer: back.body) == "v\(i)" ? 0 : 1
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(mismatches == 0)
        }
    }

    /// Through Hummingbird's router test framework: the routes answer as with the memory driver.
    @Test func routesAnswerThroughTheRouterFramework() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let persist = try CaskPersistDriver(directory: folder.path)
        try await makeApp(persist).test(.router) { client in
            try await client.execute(uri: "/kv/a", method: .post, body: ByteBuffer(string: "1")) { #expect($0.status == .created) }
            try await client.execute(uri: "/kv/a", method: .post, body: ByteBuffer(string: "2")) { #expect($0.status == .conflict) }
            try await client.execute(uri: "/kv/a", method: .get) { #expect(String(buffer: $0.body) == "1") }
            try await client.execute(uri: "/kv/missing", method: .get) { #expect($0.status == .notFound) }
        }
        try await persist.shutdown()
    }

    /// Expiry as `MemoryPersistDriver` documents it: expired is nil (and no longer a duplicate
    /// for create), `getWithTTL` reports the time left, and `set` without an expiry keeps the
    /// expiry the key had.
    @Test func expiryAndTimeToLive() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let persist = try CaskPersistDriver(directory: folder.path)
        try await persist.set(key: "brief", value: "x", expires: .milliseconds(200))
        let ttl = try #require(try await persist.getWithTTL(key: "brief", as: String.self)?.ttl)
        #expect(ttl > .zero && ttl <= .milliseconds(200))
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await persist.get(key: "brief", as: String.self) == nil)
        try await persist.create(key: "brief", value: "again", expires: nil)   // expired: not a duplicate
        #expect(try await persist.getWithTTL(key: "brief", as: String.self)?.ttl == nil)

        try await persist.set(key: "kept", value: "v1", expires: .seconds(3_600))
        try await persist.set(key: "kept", value: "v2", expires: nil)
        let kept = try #require(try await persist.getWithTTL(key: "kept", as: String.self))
        #expect(kept.object == "v2")
        #expect(try #require(kept.ttl) > .seconds(3_500))
        try await persist.shutdown()
    }

    /// A value read as a type it cannot be decoded as: `PersistError.invalidConversion`, and
    /// the value stays. A second create of a live key: `PersistError.duplicate`.
    @Test func wrongTypesAndDuplicatesGetHummingbirdsErrors() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let persist = try CaskPersistDriver(directory: folder.path)
        try await persist.set(key: "n", value: 42, expires: nil)
        await #expect(throws: PersistError.invalidConversion) { try await persist.get(key: "n", as: [String].self) }
        #expect(try await persist.get(key: "n", as: Int.self) == 42)
        try await persist.create(key: "c", value: "first", expires: .seconds(60))
        await #expect(throws: PersistError.duplicate) { try await persist.create(key: "c", value: "second", expires: nil) }
        #expect(try await persist.get(key: "c", as: String.self) == "first")
        try await persist.shutdown()
    }

    /// A second app on a folder that another driver holds open fails at start with a typed
    /// error that names the folder, and the first keeps working.
    @Test func aSecondDriverOnAnOpenFolderIsRefused() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let first = try CaskPersistDriver(directory: folder.path)
        try await first.set(key: "k", value: "v", expires: nil)
        #expect(throws: CaskError.self) { _ = try CaskPersistDriver(directory: folder.path) }
        #expect(try await first.get(key: "k", as: String.self) == "v")
        try await first.shutdown()
    }
}
