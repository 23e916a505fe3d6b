#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who runs the group commit's sync (StoreState+GroupCommit.swift): one leader at a time.
/// Writers that find a leader at work sleep on a condition variable; when it finishes they wake,
/// and each either finds its write settled (and returns at once) or becomes the next leader.
/// `close` and `removeAll` take the gate too, so that no file is closed under a running sync.
///
/// pthread mutex and condition variable, for the same reason as ``Locked`` (ThreadSanitizer).
// @unchecked: `leaderActive` is only touched with `mutex` held.
package final class CommitGate: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var leaderActive = false

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let rc = pthread_mutex_init(mutex, nil) | pthread_cond_init(condition, nil)
        precondition(rc == 0, "pthread_mutex_init / pthread_cond_init failed: \(rc)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Becomes the leader (`isLeader`), or returns as soon as `isSettled()` holds (checked on
    /// entry and each time a leader finishes). `waited` says whether another leader was at
    /// work meanwhile. A leader must call ``finish()``.
    package func lead(unlessSettled isSettled: () -> Bool) -> (isLeader: Bool, waited: Bool) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var waited = false
        while true {
            if isSettled() { return (false, waited) }
            if !leaderActive {
                leaderActive = true
                return (true, waited)
            }
            waited = true
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Ends the leadership and wakes every waiting writer.
    package func finish() {
        pthread_mutex_lock(mutex)
        leaderActive = false
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` as the leader (waiting for a running one to finish).
    package func withLeadership<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        _ = lead(unlessSettled: { false })
        defer { finish() }
        return try body()
    }
}
