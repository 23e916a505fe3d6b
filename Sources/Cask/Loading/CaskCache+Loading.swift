import Foundation

/// Get-or-load: one load per key at a time, fresh and stale periods, eager refresh, fail-safe
/// (see <doc:LoadingValues>).
extension CaskCache {
    /// The value for `key`: the cached one while it is fresh, else what `loader` returns (stored
    /// with `options`), or a stale value when the refresh is slow or fails (see
    /// ``loadedValue(forKey:as:options:loader:)``, which also says whether it is stale).
    ///
    /// ```swift
    /// let user = try await cache.value(forKey: "user:1", as: User.self,
    ///                                  options: CacheEntryOptions(timeToLive: .seconds(60), staleWindow: .seconds(86_400))) {
    ///     try await api.fetchUser(1)
    /// }
    /// ```
    /// - Throws: ``CacheLoadError``: the loader's error or a timeout when there is no stale
    ///   value to serve, the task's cancellation, or the cache's own failure.
    public func value<T: Codable & Sendable>(forKey key: String, as type: T.Type = T.self, options: CacheEntryOptions,
                                             loader: @escaping @Sendable () async throws -> T) async throws(CacheLoadError) -> T {
        try await loadedValue(forKey: key, as: type, options: options, loader: loader).value
    }

    /// The value for `key` and whether it is stale. Thread-safe; call from any task.
    ///
    /// - Fresh (within `options.timeToLive` of its load, or a value stored with `setValue(_:forKey:timeToLive:isPinned:)`
    ///   before its TTL): returned without calling `loader`. In the last part of the fresh period
    ///   (``CacheEntryOptions/eagerRefresh``) one background refresh starts.
    /// - Stale (after its fresh period, within ``CacheEntryOptions/staleWindow``): a refresh
    ///   starts, or the running one is joined. Its value is returned when it comes within the
    ///   soft timeout; otherwise the stale value is, and the refresh is stored when it ends. When
    ///   the loader throws or passes the hard timeout, the stale value is returned (fail-safe,
    ///   ``LoadedValue/loaderError``), and for ``CacheEntryOptions/failSafeThrottle`` stale reads
    ///   return it without calling the loader. Stale values are on disk: they survive a restart.
    /// - Absent or past its stale window: `loader` runs and its value is stored and returned.
    ///
    /// Concurrent calls for one key share one load: `loader` runs once, every caller gets its
    /// value or its error. A cancelled caller leaves the load to the others; the last one out
    /// cancels it, unless it refreshes a stored value (then it runs on and is stored).
    /// - Throws: ``CacheLoadError``.
    @inlinable
    public func loadedValue<T: Codable & Sendable>(forKey key: String, as type: T.Type = T.self, options: CacheEntryOptions,
                                                   loader: @escaping @Sendable () async throws -> T) async throws(CacheLoadError) -> LoadedValue<T> {
        // Inlinable, so that a fresh value in memory is answered specialised for `T` in the
        // caller's module, as a plain memory hit is (unspecialised, the generic metadata
        // lookups alone cost about 1 µs a call).
        if let fresh: T = freshMemoryHit(forKey: key, options: options) { return LoadedValue(value: fresh, isStale: false) }
        return try await loadOrRefresh(forKey: key, as: type, options: options, loader: loader)
    }

    /// ``loadedValue(forKey:as:options:loader:)`` past a fresh memory hit.
    @usableFromInline
    func loadOrRefresh<T: Codable & Sendable>(forKey key: String, as type: T.Type, options: CacheEntryOptions,
                                              loader: @escaping @Sendable () async throws -> T) async throws(CacheLoadError) -> LoadedValue<T> {
        do { try options.validate() } catch { throw .cache(error) }
        let now = self.options.disk.clock.now
        let stored = try await storedEntry(forKey: key, as: T.self, now: now)
        if let stored, stored.isFresh(at: now) {
            if stored.isDueForEagerRefresh(at: now, options: options) { refreshInBackground(key, replacing: stored.freshUntil, options: options, loader: loader) }
            return LoadedValue(value: stored.value, isStale: false)
        }
        if let stored { return try await refreshStale(stored, forKey: key, now: now, options: options, loader: loader) }
        return try await loadAbsent(key, options: options, loader: loader)
    }

    /// The loader API's statistics (loads, failures, waits, stale values served).
    public var loadStatistics: LoadStatistics { loads.statistics.snapshot }

    /// Loads not yet finished (for tests).
    package var runningLoadCount: Int { loads.runningCount }

    // MARK: The three cases

    /// A stale value: served when the refresh is slow, fails, or is throttled.
    private func refreshStale<T: Codable & Sendable>(_ stale: StoredEntry<T>, forKey key: String, now: Int64, options: CacheEntryOptions,
                                                     loader: @escaping @Sendable () async throws -> T) async throws(CacheLoadError) -> LoadedValue<T> {
        let stats = loads.statistics
        if loads.isThrottled(key, now: now) {
            stats.staleValuesServed.add(1, ordering: .relaxed)
            return LoadedValue(value: stale.value, isStale: true)
        }
        let load = startLoad(key, options: options, keepsRunning: true, replacing: stale.freshUntil, loader: loader)
        let soft = options.softTimeout.map { s in options.hardTimeout.map { min(s, $0) } ?? s } ?? options.hardTimeout
        switch await load.wait(timeout: soft) {
        case .finished(.loaded(let value)):
            return LoadedValue(value: value, isStale: false)
        case .finished(.failed(let error)):
            loads.throttle(key, until: now + max(0, options.failSafeThrottle.milliseconds))
            stats.failSafeActivations.add(1, ordering: .relaxed)
            stats.staleValuesServed.add(1, ordering: .relaxed)
            return LoadedValue(value: stale.value, isStale: true, loaderError: error)
        case .timedOut:
            if options.softTimeout == nil || soft == options.hardTimeout { stats.failSafeActivations.add(1, ordering: .relaxed) }
            stats.staleValuesServed.add(1, ordering: .relaxed)
            return LoadedValue(value: stale.value, isStale: true)
        case .cancelled:
            throw .cancelled(key: key)
        }
    }

    /// No value at hand: the loader's value, or its error.
    private func loadAbsent<T: Codable & Sendable>(_ key: String, options: CacheEntryOptions,
                                                   loader: @escaping @Sendable () async throws -> T) async throws(CacheLoadError) -> LoadedValue<T> {
        let load = startLoad(key, options: options, keepsRunning: false, loader: loader)
        switch await load.wait(timeout: options.hardTimeout) {
        case .finished(.loaded(let value)): return LoadedValue(value: value, isStale: false)
        case .finished(.failed(let error)):
            if let error = error as? CacheLoadError { throw error }
            throw .loaderFailed(key: key, error: error)
        case .timedOut: throw .timedOut(key: key, after: options.hardTimeout ?? .zero)
        case .cancelled: throw .cancelled(key: key)
        }
    }

    /// A fresh value due for eager refresh: one background load, unless one runs or the
    /// key's throttle does.
    private func refreshInBackground<T: Codable & Sendable>(_ key: String, replacing freshUntil: Int64, options: CacheEntryOptions,
                                                            loader: @escaping @Sendable () async throws -> T) {
        guard !loads.isThrottled(key, now: self.options.disk.clock.now) else { return }
        _ = startLoad(key, options: options, keepsRunning: true, countsWait: false, replacing: freshUntil, loader: loader)
    }

    // MARK: Loading and storing

    /// Joins the running load of `key`, or starts one that runs `loader` and stores its value.
    /// `freshUntil`: the end of the fresh period of the value a refresh replaces (0: none), so
    /// that with a shared tier only a newer value loaded by another node answers it.
    private func startLoad<T: Codable & Sendable>(_ key: String, options: CacheEntryOptions, keepsRunning: Bool, countsWait: Bool = true,
                                                  replacing freshUntil: Int64 = 0,
                                                  loader: @escaping @Sendable () async throws -> T) -> InFlightLoad<T> {
        let (load, isNew) = loads.join(key, as: T.self, keepsRunning: keepsRunning) { [self] load in
            let started = ContinuousClock.now
            let outcome: LoadOutcome<T>
            do {
                switch try await loadOnce(key, as: T.self, replacing: freshUntil, loader: loader) {
                case let .loadedHere(value, claim):
                    outcome = .loaded(value)
                    if !load.isAbandoned { await storeLoaded(value, forKey: key, options: options) }
                    releaseLoadClaim(claim, forKey: key)
                case .loadedElsewhere(let value):
                    outcome = .loaded(value)
                    loads.endThrottle(key)
                }
            } catch { outcome = .failed(error) }
            record(outcome, of: load, took: ContinuousClock.now - started)
            load.finish(outcome)
        }
        let stats = loads.statistics
        if isNew {
            stats.loads.add(1, ordering: .relaxed)
            if keepsRunning { stats.refreshesStarted.add(1, ordering: .relaxed) }
        } else if countsWait {
            stats.coalescedWaits.add(1, ordering: .relaxed)
        }
        return load
    }

    private func record<T>(_ outcome: LoadOutcome<T>, of load: InFlightLoad<T>, took time: Duration) {
        let stats = loads.statistics
        if load.isAbandoned { stats.loadsCancelled.add(1, ordering: .relaxed); return }
        if case .failed = outcome { stats.loadFailures.add(1, ordering: .relaxed) }
        stats.recordLoadTime(time)
        if disk.timings.isObserved {
            if case .failed = outcome { disk.timings.deliver(CaskTiming(.failedLoad, time)) } else { disk.timings.deliver(CaskTiming(.load, time)) }
        }
    }

    /// Stores a loaded value with `options` (off Swift's cooperative pool: disk I/O). A failure
    /// is counted and logged: the callers still get the value.
    private func storeLoaded<T: Codable & Sendable>(_ value: T, forKey key: String, options: CacheEntryOptions) async {
        do throws(CaskError) {
            try await Self.offload { () throws(CaskError) in try self.storeLoadedNow(value, forKey: key, options: options) }
            loads.endThrottle(key)
        } catch {
            loads.statistics.storeFailures.add(1, ordering: .relaxed)
            self.options.disk.logger.warning("could not store the loaded value of '\(key)': \(error)")
        }
    }

    private func storeLoadedNow<T: Codable & Sendable>(_ value: T, forKey key: String, options: CacheEntryOptions) throws(CaskError) {
        let data = try encode(value, forKey: key)
        let jitter = options.timeToLiveJitter.milliseconds
        let fresh = options.timeToLive.milliseconds + (jitter > 0 ? Int64.random(in: 0...jitter) : 0)
        guard options.staleWindow > .zero || !options.tags.isEmpty else {
            try writeThrough(value, data: data, forKey: key, as: .plain(timeToLive: .milliseconds(fresh), isPinned: false))
            return
        }
        try writeThrough(value, data: data, forKey: key, as: .entry(freshFor: .milliseconds(fresh), staleWindow: options.staleWindow, tags: options.sortedTags))
    }
}

extension CaskCache {
    /// Calls `observer` with the duration of every load run by the get-or-load calls (a loader
    /// that returned a value, or one that threw; not a cancelled one) and of every sync and
    /// compaction pass of the disk layer (``DiskStore/observeTimings(_:)``), from now on, until
    /// the returned observation is cancelled or released.
    ///
    /// Nothing is timed while no observer is registered. `observer` runs on the thread that did
    /// the work, sometimes under the store's lock: it must be quick and must not call the cache.
    /// Thread-safe; several observers may be registered.
    public func observeTimings(_ observer: @escaping @Sendable (CaskTiming) -> Void) -> TimingObservation {
        disk.observeTimings(observer)
    }
}
