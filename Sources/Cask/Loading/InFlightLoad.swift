

/// How a load ended.
enum LoadOutcome<T: Sendable>: Sendable {
    case loaded(T)
    case failed(any Error)
}

/// How one caller's wait for a load ended.
enum LoadWait<T: Sendable>: Sendable {
    case finished(LoadOutcome<T>)
    case timedOut
    case cancelled
}

/// One caller's place in a load: resolved exactly once, by the load's end, the caller's
/// timeout or its task's cancellation, whichever comes first.
final class LoadWaiter<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<LoadWait<T>, Never>?
        var result: LoadWait<T>?
    }
    private let state = Locked(State())

    /// Parks the caller until ``resolve(_:)``; at once when it already was.
    func install(_ continuation: CheckedContinuation<LoadWait<T>, Never>) {
        let ready = state.withLock { s -> LoadWait<T>? in
            if let r = s.result { return r }
            s.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Ends the wait with `result`; false when it had already ended.
    @discardableResult
    func resolve(_ result: LoadWait<T>) -> Bool {
        let c = state.withLock { s -> CheckedContinuation<LoadWait<T>, Never>?? in
            guard s.result == nil else { return nil }
            s.result = result
            defer { s.continuation = nil }
            return .some(s.continuation)
        }
        guard let c else { return false }
        c?.resume(returning: result)
        return true
    }
}

/// One running load of one key, shared by every caller that asks for the key meanwhile.
///
/// Rules (see <doc:LoadingValues>): a caller that leaves (its timeout, its task cancelled)
/// leaves the load to the others; when the last one leaves a load that is not
/// ``keepsRunning``, the load's task is cancelled and the load is abandoned (forgotten, so that
/// the next caller starts a new one). A load that refreshes a stored value keeps running
/// without callers and stores what it loads. Thread-safe.
final class InFlightLoad<T: Sendable>: Sendable {
    private struct State {
        var waiters: [ObjectIdentifier: LoadWaiter<T>] = [:]
        var outcome: LoadOutcome<T>?
        var keepsRunning: Bool
        var abandoned = false
        var task: Task<Void, Never>?
    }
    private let state: Locked<State>
    /// Forgets this load in its coordinator (identity-checked there).
    private let forget: @Sendable (InFlightLoad<T>) -> Void

    init(keepsRunning: Bool, forget: @escaping @Sendable (InFlightLoad<T>) -> Void) {
        state = Locked(State(keepsRunning: keepsRunning))
        self.forget = forget
    }

    /// Set once, by the coordinator, when it starts the load.
    func setTask(_ task: Task<Void, Never>) { state.withLock { $0.task = task } }

    /// From now on the load runs to its end even without callers (it refreshes a stored value).
    func keepRunning() { state.withLock { $0.keepsRunning = true } }

    /// Whether the last caller left and the load was cancelled.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Waits for the load's outcome, at most `timeout` (real time) when given. Cancelling the
    /// calling task ends the wait with `.cancelled`.
    func wait(timeout: Duration?) async -> LoadWait<T> {
        let waiter = LoadWaiter<T>()
        let done = state.withLock { s -> LoadOutcome<T>? in
            if s.outcome == nil { s.waiters[ObjectIdentifier(waiter)] = waiter }
            return s.outcome
        }
        if let done { return .finished(done) }
        let timer = timeout.map { limit in
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                if !Task.isCancelled, waiter.resolve(.timedOut) { self?.leave(waiter) }
            }
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { waiter.install($0) }
        } onCancel: {
            if waiter.resolve(.cancelled) { self.leave(waiter) }
        }
        timer?.cancel()
        return result
    }

    /// A caller left before the end: the last one out cancels a load that need not keep running.
    private func leave(_ waiter: LoadWaiter<T>) {
        let cancel = state.withLock { s -> Task<Void, Never>? in
            s.waiters[ObjectIdentifier(waiter)] = nil
            guard s.waiters.isEmpty, !s.keepsRunning, s.outcome == nil, !s.abandoned else { return nil }
            s.abandoned = true
            return s.task
        }
        guard let cancel else { return }
        forget(self)
        cancel.cancel()
    }

    /// Ends the load: forgets it, then hands `outcome` to every caller still waiting.
    func finish(_ outcome: LoadOutcome<T>) {
        forget(self)
        let waiters = state.withLock { s -> [LoadWaiter<T>] in
            s.outcome = outcome
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resolve(.finished(outcome)) }
    }
}
