import Cask
import CaskHummingbird
import CaskRedis
import CaskServices
import Foundation
import HTTPTypes
import Hummingbird
import Prometheus

/// What the example server is configured with.
public struct ServerSettings: Sendable {
    /// The folder the cache lives in.
    public var folder: String
    /// How long a user stays fresh, then how long it may be served stale.
    public var timeToLive: Duration = .seconds(30)
    public var staleWindow: Duration = .seconds(3_600)
    public var address: BindAddress = .hostname("127.0.0.1", port: 8080)
    /// A Redis every instance shares (the cache's shared tier): nil for this instance alone.
    public var redis: RedisConfiguration?

    public init(folder: String) { self.folder = folder }
}

/// The example service:
/// - `GET /users/:id`: the user from the upstream through the cache's get-or-load. Concurrent
///   requests for one id share one upstream call; while the upstream fails, a stale user is
///   served (header `X-Cache-Stale: true`) across restarts too.
/// - `POST /login/:name`: starts a session (persist driver, 1 hour); answers its token.
/// - `GET /me` with header `X-Session: <token>`: the session's name, 401 without one.
/// - `DELETE /users/:id`: forgets the cached user, on every instance sharing the Redis.
/// - `PUT /upstream/failing` and `PUT /upstream/healthy`: the switch that makes the upstream fail
///   (to see the fail-safe by hand).
/// - `GET /metrics`: the cache's metrics in Prometheus's text format.
public func buildApplication(_ settings: ServerSettings, upstream: SlowUpstream) throws -> some ApplicationProtocol {
    var cacheOptions = CacheOptions()
    cacheOptions.sharedTier = settings.redis.map { RedisSharedTier($0) }
    let cache = try CaskCache(directory: settings.folder, options: cacheOptions)
    let sessions = CaskPersistDriver(cache: cache)   // one store for both; closed at shutdown
    let registry = PrometheusCollectorRegistry()
    var factory = PrometheusMetricsFactory(registry: registry)
    // Syncs take well under the default buckets' 5 ms on most disks.
    factory.durationHistogramBuckets["cask_sync_duration_seconds"] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(100), .seconds(1),
    ]
    let metrics = CaskMetrics(cache: cache, dimensions: [("cache", "example")], factory: factory)
    let options = CacheEntryOptions(timeToLive: settings.timeToLive, staleWindow: settings.staleWindow,
                                    softTimeout: .seconds(1), hardTimeout: .seconds(5))
    let router = Router()
    router.get("/users/:id") { _, context -> Response in
        let id = try context.parameters.require("id", as: Int.self)
        let loaded = try await cache.loadedValue(forKey: "user:\(id)", as: User.self, options: options) {
            try await upstream.user(id)
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[HTTPField.Name("X-Cache-Stale")!] = loaded.isStale ? "true" : "false"
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(loaded.value))))
    }
    router.delete("/users/:id") { _, context -> HTTPResponse.Status in
        let id = try context.parameters.require("id", as: Int.self)
        try await cache.removeValue(forKey: "user:\(id)")
        return .noContent
    }
    router.put("/upstream/:state") { _, context -> HTTPResponse.Status in
        upstream.isFailing = try context.parameters.require("state") == "failing"
        return .noContent
    }
    router.post("/login/:name") { _, context -> String in
        let token = UUID().uuidString
        try await sessions.set(key: "session:\(token)", value: try context.parameters.require("name"), expires: .seconds(3_600))
        return token
    }
    router.get("/me") { request, _ -> String in
        guard let token = request.headers[HTTPField.Name("X-Session")!],
              let name = try await sessions.get(key: "session:\(token)", as: String.self) else { throw HTTPError(.unauthorized) }
        return name
    }
    router.get("/metrics") { _, _ -> String in
        metrics.report()
        return registry.emitToString()
    }
    return Application(router: router, configuration: .init(address: settings.address), services: [sessions])
}
