import NIOCore
import NIOPosix

/// One connection to Redis, speaking RESP3 (`HELLO 3`, authenticated and on its database when
/// configured). Commands may be pipelined from any thread; each waits at most its timeout,
/// after which the connection is closed (a late reply would otherwise answer the next command).
final class RedisConnection: Sendable {
    private let channel: any Channel

    private init(channel: any Channel) { self.channel = channel }

    /// Connects and says hello.
    static func connect(_ configuration: RedisConfiguration, onPush: @escaping @Sendable (RESPValue) -> Void = { _ in }) async throws -> RedisConnection {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeAmount(configuration.commandTimeout))
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // A reply may not grow the buffer past Redis' largest value and some.
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPDecoder(), maximumBufferSize: 600 << 20))
                    try channel.pipeline.syncOperations.addHandler(RESPHandler(onPush: onPush))
                }
            }
        let channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
        let connection = RedisConnection(channel: channel)
        do {
            var hello: [String] = ["HELLO", "3"]
            if let password = configuration.password { hello += ["AUTH", configuration.username ?? "default", password] }
            _ = try await connection.send(hello.map { Array($0.utf8) }, timeout: configuration.commandTimeout)
            if configuration.database != 0 {
                _ = try await connection.send([Array("SELECT".utf8), Array("\(configuration.database)".utf8)], timeout: configuration.commandTimeout)
            }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Whether the connection is still open.
    var isActive: Bool { channel.isActive }

    /// Sends one command and waits for its reply, at most `timeout`.
    /// - Throws: ``RedisClientError``: `.server` for an error reply, `.timeout`,
    ///   `.connectionClosed`, `.protocolViolation`.
    func send(_ arguments: [[UInt8]], timeout: Duration) async throws -> RESPValue {
        let promise = channel.eventLoop.makePromise(of: RESPValue.self)
        var buffer = channel.allocator.buffer(capacity: arguments.reduce(16) { $0 + $1.count + 16 })
        RESPCommand.write(arguments, into: &buffer)
        let channel = self.channel
        let timedOut = channel.eventLoop.scheduleTask(in: Self.timeAmount(timeout)) {
            promise.fail(RedisClientError.timeout)   // ignored when the reply came first
            channel.close(promise: nil)              // fails every other command in flight
        }
        channel.writeAndFlush(RESPRequest(buffer: buffer, promise: promise), promise: nil)
        let reply: RESPValue
        do {
            reply = try await promise.futureResult.get()
            timedOut.cancel()
        } catch {
            timedOut.cancel()
            throw error
        }
        if case .error(let message) = reply { throw RedisClientError.server(message) }
        return reply
    }

    /// Closes the connection; commands in flight fail.
    func close() { channel.close(promise: nil) }

    /// `duration` as NIO's time amount, whole seconds capped at a day (no overflow).
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let seconds = min(max(0, duration.components.seconds), 86_400)
        return .nanoseconds(seconds * 1_000_000_000 + max(0, duration.components.attoseconds) / 1_000_000_000)
    }
}
