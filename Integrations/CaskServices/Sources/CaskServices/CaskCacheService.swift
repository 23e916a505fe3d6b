import Cask
import ServiceLifecycle

/// A ``Cask/CaskCache`` as a swift-service-lifecycle `Service`: in a `ServiceGroup`, it runs until
/// the group's graceful shutdown (or its task's cancellation), reporting ``CaskMetrics`` every
/// `metricsInterval` when it has them, then closes the cache (syncing the store and writing its
/// index snapshot, so the next start opens fast).
///
/// The package's README.md shows it in a `ServiceGroup` (an example its tests compile).
public struct CaskCacheService: Service {
    /// The cache the service closes at shutdown.
    public let cache: CaskCache
    /// The metrics it reports, if any.
    public let metrics: CaskMetrics?
    /// How often the metrics are reported while the service runs.
    public let metricsInterval: Duration

    public init(cache: CaskCache, metrics: CaskMetrics? = nil, metricsInterval: Duration = .seconds(10)) {
        self.cache = cache
        self.metrics = metrics
        self.metricsInterval = metricsInterval
    }

    /// Reports the metrics every `metricsInterval` until graceful shutdown or cancellation, then
    /// reports them once more and closes the cache.
    /// - Throws: what ``Cask/CaskCache/close()`` throws (a failed sync of the store).
    public func run() async throws {
        if let metrics {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    metrics.report()
                    try? await Task.sleep(for: metricsInterval)
                }
            }
            metrics.report()
        } else {
            try? await gracefulShutdown()   // a cancellation ends the wait as a shutdown does
        }
        try await cache.close()
    }
}
