

/// The loads running in one cache, at most one per key (and value type), and the keys whose
/// fail-safe throttle runs. Thread-safe; nothing here waits while holding its lock.
final class LoadCoordinator: Sendable {
    private struct LoadKey: Hashable {
        let key: String
        let type: ObjectIdentifier
    }
    private let loads = Locked<[LoadKey: any AnyObject & Sendable]>([:])
    /// Key -> the time (ms of the store's clock) until which stale reads skip the loader.
    private let throttles = Locked<[String: Int64]>([:])
    let statistics = LoadStatisticsRecorder()

    /// The running load of `key` as a `T`, or a new one started with `body` (which runs the
    /// loader, stores its value and finishes the load). `keepsRunning`: the load refreshes a
    /// stored value, and runs to its end without callers (a joined load is switched to it).
    func join<T: Sendable>(_ key: String, as type: T.Type, keepsRunning: Bool,
                           start body: @escaping @Sendable (InFlightLoad<T>) async -> Void) -> (load: InFlightLoad<T>, isNew: Bool) {
        let id = LoadKey(key: key, type: ObjectIdentifier(T.self))
        let (load, isNew) = loads.withLock { map -> (InFlightLoad<T>, Bool) in
            if let running = map[id] as? InFlightLoad<T> { return (running, false) }
            let load = InFlightLoad<T>(keepsRunning: keepsRunning) { [weak self] done in
                self?.loads.withLock { map in if map[id] === done { map[id] = nil } }
            }
            map[id] = load
            load.setTask(Task { await body(load) })
            return (load, true)
        }
        if !isNew && keepsRunning { load.keepRunning() }
        return (load, isNew)
    }

    /// Loads not yet finished or abandoned (for tests).
    var runningCount: Int { loads.withLock { $0.count } }

    /// Whether a fail-safe throttle of `key` runs at `now`.
    func isThrottled(_ key: String, now: Int64) -> Bool {
        throttles.withLock { t in
            guard let until = t[key] else { return false }
            if now >= until { t[key] = nil; return false }
            return true
        }
    }

    /// Starts `key`'s fail-safe throttle: until `until` (ms), stale reads skip the loader.
    func throttle(_ key: String, until: Int64) { throttles.withLock { $0[key] = until } }

    /// A fresh value was stored: the key's throttle (if any) ends.
    func endThrottle(_ key: String) {
        throttles.withLock { t in if !t.isEmpty { t[key] = nil } }
    }
}
