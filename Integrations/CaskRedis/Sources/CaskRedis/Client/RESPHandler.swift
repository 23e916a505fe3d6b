import NIOCore

/// A command on its way to the server, with the promise its reply completes.
struct RESPRequest: Sendable {
    let buffer: ByteBuffer
    let promise: EventLoopPromise<RESPValue>
}

/// Matches replies to commands in order (pipelining: many may be in flight) and hands push
/// messages to `onPush`. When the connection ends or fails, every command in flight fails
/// with ``RedisClientError/connectionClosed``, once. Runs on its channel's event loop.
final class RESPHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = RESPRequest
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<EventLoopPromise<RESPValue>>()
    private var isClosed = false
    private let onPush: @Sendable (RESPValue) -> Void

    init(onPush: @escaping @Sendable (RESPValue) -> Void) { self.onPush = onPush }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        // A command written after the connection ended, or whose write fails, fails at once
        // (a second completion of a promise is ignored by NIO).
        guard !isClosed else {
            request.promise.fail(RedisClientError.connectionClosed)
            promise?.fail(RedisClientError.connectionClosed)
            return
        }
        waiting.append(request.promise)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { _ in request.promise.fail(RedisClientError.connectionClosed) }
        written.futureResult.cascade(to: promise)
        context.write(wrapOutboundOut(request.buffer), promise: written)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = unwrapInboundIn(data)
        if case .push = value { onPush(value); return }
        guard let promise = waiting.popFirst() else {
            // A reply nobody asked for: the stream is out of step; end it.
            context.close(promise: nil)
            return
        }
        promise.succeed(value)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        failAll(RedisClientError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        isClosed = true
        failAll(error is RESPDecodingError ? RedisClientError.protocolViolation("\(error)") : RedisClientError.connectionClosed)
        context.close(promise: nil)
    }

    private func failAll(_ error: any Error) {
        while let promise = waiting.popFirst() { promise.fail(error) }
    }
}

/// What a Redis call can fail with.
public enum RedisClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection ended (or was closed after a timeout) before the reply came.
    case connectionClosed
    /// No reply within the command timeout; the connection was closed.
    case timeout
    /// Redis answered with an error reply.
    case server(String)
    /// The server sent bytes that are not RESP3; the connection was closed.
    case protocolViolation(String)
    /// Connecting failed recently; no new attempt until the backoff has passed.
    case unavailable(String)
    /// A reply of a shape the command never has.
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .connectionClosed: "the connection to Redis closed before the reply"
        case .timeout: "Redis did not answer within the command timeout"
        case .server(let m): "Redis answered with an error: \(m)"
        case .protocolViolation(let m): "the server's reply is not RESP3 (\(m)); is it Redis 6 or later?"
        case .unavailable(let m): "Redis is unreachable (\(m)); retrying after a backoff"
        case .unexpectedReply(let m): "unexpected reply from Redis: \(m)"
        }
    }
}
