import Cask
import Foundation
import Vapor

/// A Vapor `Cache` backed by a ``Cask/CaskCache``: values survive restarts and deploys, in a
/// folder on the server, with no Redis to run.
///
/// Replaces `app.caches.use(.memory)` in one line: `app.caches.use(.cask(try CaskCache(directory:)))`
/// (the package's README.md shows it in an app, which its tests compile and run).
///
/// `set(_:to:expiresIn:)` keeps the expiry (Vapor's default implementation drops it); setting
/// nil removes the key. Values are encoded with the cache's coder (JSON by default); a stored
/// value that cannot be decoded as the asked type fails the future with
/// `CaskError.typeMismatch`, and the value stays. Disk work runs off the event loop; the
/// futures complete on it. Thread-safe.
public struct CaskVaporCache: Cache, Sendable {
    /// The cache the values live in.
    public let cache: CaskCache
    /// The event loop the futures complete on.
    public let eventLoop: any EventLoop

    public init(cache: CaskCache, on eventLoop: any EventLoop) {
        self.cache = cache
        self.eventLoop = eventLoop
    }

    public func get<T: Decodable>(_ key: String, as type: T.Type) -> EventLoopFuture<T?> {
        let cache = self.cache
        // The async read: with a shared tier (`CacheOptions.sharedTier`) a local miss reads through it.
        let promise = eventLoop.makePromise(of: Data?.self)
        promise.completeWithTask { try await cache.data(forKey: key) }
        return promise.futureResult.flatMapThrowing { data in
            guard let data else { return nil }
            do { return try cache.options.coder.decode(T.self, from: data) } catch {
                throw CaskError.typeMismatch(key: key, type: "\(T.self)", reason: "\(error)")
            }
        }
    }

    public func set<T: Encodable>(_ key: String, to value: T?) -> EventLoopFuture<Void> {
        set(key, to: value, expiresIn: nil)
    }

    public func set<T: Encodable>(_ key: String, to value: T?, expiresIn expirationTime: CacheExpirationTime?) -> EventLoopFuture<Void> {
        let cache = self.cache
        guard let value else { return run { _ = try cache.removeValue(forKey: key) } }
        let data: Data
        do { data = try cache.options.coder.encode(value) } catch {
            return eventLoop.makeFailedFuture(CaskError.coding(key: key, reason: "\(error)"))
        }
        let ttl = expirationTime.map { Duration.seconds(max(0, $0.seconds)) }
        // Cask refuses a TTL under 1 ms; an expiry of 0 seconds stores nothing, as it would be
        // gone at once.
        if let ttl, ttl < .milliseconds(1) { return run { _ = try cache.removeValue(forKey: key) } }
        return run { try cache.setData(data, forKey: key, timeToLive: ttl) }
    }

    public func `for`(_ request: Request) -> CaskVaporCache {
        CaskVaporCache(cache: cache, on: request.eventLoop)
    }

    /// Runs blocking store work on a Dispatch queue (never on the event loop), completing on it.
    private func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) -> EventLoopFuture<R> {
        let promise = eventLoop.makePromise(of: R.self)
        DispatchQueue.global().async { promise.completeWith(Result { try body() }) }
        return promise.futureResult
    }
}

extension Application.Caches.Provider {
    /// Stores the app's cache in `cache` (see ``CaskVaporCache``), which the app closes when it
    /// shuts down (syncing the store and writing its index snapshot, so the next start opens
    /// fast).
    public static func cask(_ cache: CaskCache) -> Self {
        .init { app in
            app.lifecycle.use(CaskShutdown(cache: cache))
            app.caches.use { app in CaskVaporCache(cache: cache, on: app.eventLoopGroup.next()) }
        }
    }
}

/// Closes the store when the app shuts down.
struct CaskShutdown: LifecycleHandler {
    let cache: CaskCache

    func shutdownAsync(_ application: Application) async {
        do { try await cache.close() } catch {
            application.logger.warning("could not close the Cask store \(cache.disk.directory): \(error)")
        }
    }
}
