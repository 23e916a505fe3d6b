import Foundation
import NIOCore
import Synchronization

/// What ``RedisSharedTier`` needs from a Redis client: one command at a time or pipelined, each
/// bounded by a timeout. A maintained client (valkey-swift, RediStack) can take this place.
protocol RedisCommandSending: Sendable {
    /// Sends a command and answers its reply; an error reply throws.
    func send(_ arguments: [[UInt8]], timeout: Duration) async throws -> RESPValue
    /// Closes the client's connections.
    func close()
}

/// A Redis client that keeps one connection and makes a new one when it is lost, no sooner
/// than a backoff after the last failed attempt (from 50 ms doubling to 5 s, with jitter),
/// failing calls fast in between. Thread-safe.
final class RedisClient: RedisCommandSending {
    private struct State {
        var connection: RedisConnection?
        var connecting: Task<RedisConnection, any Error>?
        var nextAttempt = ContinuousClock.now
        var failures = 0
        var closed = false
    }

    let configuration: RedisConfiguration
    private let state = Mutex(State())
    init(configuration: RedisConfiguration) {
        self.configuration = configuration
    }

    func send(_ arguments: [[UInt8]], timeout: Duration) async throws -> RESPValue {
        let connection = try await currentConnection()
        do {
            return try await connection.send(arguments, timeout: timeout)
        } catch let error as RedisClientError where error == .connectionClosed {
            forget(connection)
            throw error
        }
    }

    func close() {
        let connection = state.withLock { s -> RedisConnection? in
            s.closed = true
            s.connecting?.cancel()
            defer { s.connection = nil }
            return s.connection
        }
        connection?.close()
    }

    /// The open connection, or a new one (shared by the callers that ask meanwhile).
    private func currentConnection() async throws -> RedisConnection {
        enum Next { case ready(RedisConnection), wait(Task<RedisConnection, any Error>), refuse(String) }
        let next = state.withLock { s -> Next in
            if s.closed { return .refuse("the client is closed") }
            if let c = s.connection, c.isActive { return .ready(c) }
            s.connection = nil
            if let task = s.connecting { return .wait(task) }
            guard ContinuousClock.now >= s.nextAttempt else { return .refuse("\(s.failures) failed attempts") }
            let configuration = self.configuration
            let task = Task { try await RedisConnection.connect(configuration) }
            s.connecting = task
            return .wait(task)
        }
        switch next {
        case .ready(let c): return c
        case .refuse(let why): throw RedisClientError.unavailable(why)
        case .wait(let task):
            do {
                let c = try await task.value
                let isNew = state.withLock { s -> Bool in
                    guard s.connecting == task, !s.closed else { return false }
                    s.connecting = nil
                    s.connection = c
                    s.failures = 0
                    return true
                }
                if !isNew, state.withLock({ $0.closed }) {
                    c.close()   // connected after the client closed: not kept
                    throw RedisClientError.unavailable("the client is closed")
                }
                return c
            } catch {
                state.withLock { s in
                    guard s.connecting == task else { return }
                    s.connecting = nil
                    s.failures += 1
                    let ms = min(5_000.0, 50.0 * pow(2, Double(min(s.failures - 1, 7)))) * Double.random(in: 0.5...1)
                    s.nextAttempt = ContinuousClock.now + .milliseconds(Int(ms))
                }
                throw RedisClientError.unavailable("\(error)")
            }
        }
    }

    private func forget(_ connection: RedisConnection) {
        state.withLock { s in if s.connection === connection { s.connection = nil } }
    }
}
