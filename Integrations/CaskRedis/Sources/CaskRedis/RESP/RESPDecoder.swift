import NIOCore

/// Parses RESP3 values from bytes a server sent, trusting none of it: every length and count
/// is checked against ``Limits`` before it is used, nesting is bounded, and anything malformed
/// throws ``RESPDecodingError`` (the connection is then closed). Incomplete input answers nil
/// and consumes nothing.
struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    /// Bounds on what one value may claim.
    struct Limits {
        /// The longest bulk string (bytes). Default 512 MiB, Redis' own limit.
        var bulkBytes = 512 << 20
        /// The most elements of one aggregate. Default 2^24.
        var elements = 1 << 24
        /// The deepest nesting. Default 32.
        var depth = 32
        /// The longest line of a simple type (bytes). Default 64 KiB.
        var lineBytes = 64 << 10
    }

    var limits = Limits()

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try Self.parse(&buffer, limits: limits) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(value))
        return .continue
    }

    /// Parses one value from the front of `buffer`, consuming it; nil (consuming nothing) when
    /// the value is not complete yet.
    static func parse(_ buffer: inout ByteBuffer, limits: Limits = Limits()) throws(RESPDecodingError) -> RESPValue? {
        var view = buffer
        guard let value = try parseValue(&view, limits: limits, depth: 0) else { return nil }
        buffer = view
        return value
    }

    private static func parseValue(_ b: inout ByteBuffer, limits: Limits, depth: Int) throws(RESPDecodingError) -> RESPValue? {
        guard depth <= limits.depth else { throw .tooDeep }
        guard let type: UInt8 = b.readInteger() else { return nil }
        guard let line = try readLine(&b, limit: limits.lineBytes) else { return nil }
        switch type {
        case UInt8(ascii: "+"): return .simpleString(line)
        case UInt8(ascii: "-"): return .error(line)
        case UInt8(ascii: ":"): return .integer(try integer(line))
        case UInt8(ascii: "$"), UInt8(ascii: "="), UInt8(ascii: "!"):
            let n = try integer(line)
            if n == -1, type == UInt8(ascii: "$") { return .null }
            guard n >= 0, n <= limits.bulkBytes else { throw .badLength(n) }
            guard b.readableBytes >= Int(n) + 2, let bytes = b.readBytes(length: Int(n)) else { return nil }
            guard b.readInteger(as: UInt16.self) == 0x0D0A else { throw .missingTerminator }
            switch type {
            case UInt8(ascii: "$"): return .bulkString(bytes)
            case UInt8(ascii: "="): return .verbatim(String(decoding: bytes.dropFirst(min(4, bytes.count)), as: UTF8.self))
            default: return .error(String(decoding: bytes, as: UTF8.self))
            }
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "%"), UInt8(ascii: "|"):
            let n = try integer(line)
            if n == -1, type == UInt8(ascii: "*") { return .null }
            guard n >= 0, n <= limits.elements else { throw .badLength(n) }
            let count = type == UInt8(ascii: "%") || type == UInt8(ascii: "|") ? Int(n) * 2 : Int(n)
            // Each element takes at least 3 bytes: never reserve more than the input can hold.
            var items: [RESPValue] = []
            items.reserveCapacity(min(count, 1024))   // grows as elements come; a claim reserves little
            for _ in 0..<count {
                guard let item = try parseValue(&b, limits: limits, depth: depth + 1) else { return nil }
                items.append(item)
            }
            switch type {
            case UInt8(ascii: "*"): return .array(items)
            case UInt8(ascii: "~"): return .set(items)
            case UInt8(ascii: ">"): return .push(items)
            case UInt8(ascii: "%"): return .map(items)
            default: return try parseValue(&b, limits: limits, depth: depth + 1)   // an attribute precedes the value
            }
        case UInt8(ascii: "_"):
            guard line.isEmpty else { throw .malformed(line) }
            return .null
        case UInt8(ascii: "#"):
            guard line == "t" || line == "f" else { throw .malformed(line) }
            return .boolean(line == "t")
        case UInt8(ascii: ","):
            guard let d = Double(line) ?? (line == "inf" ? .infinity : line == "-inf" ? -.infinity : nil) else { throw .malformed(line) }
            return .double(d)
        case UInt8(ascii: "("):
            guard !line.isEmpty, line.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) }) else { throw .malformed(line) }
            return .bigNumber(line)
        default:
            throw .unknownType(type)
        }
    }

    /// A line up to CRLF, consumed with it; nil when the CRLF has not come yet.
    private static func readLine(_ b: inout ByteBuffer, limit: Int) throws(RESPDecodingError) -> String? {
        let view = b.readableBytesView
        guard let cr = view.firstIndex(of: 0x0D) else {
            guard view.count <= limit else { throw .lineTooLong }
            return nil
        }
        let length = cr - view.startIndex
        guard length <= limit else { throw .lineTooLong }
        guard b.readableBytes >= length + 2 else { return nil }
        guard b.getInteger(at: b.readerIndex + length + 1, as: UInt8.self) == 0x0A else { throw .missingTerminator }
        let line = b.readString(length: length) ?? ""
        b.moveReaderIndex(forwardBy: 2)
        return line
    }

    private static func integer(_ line: String) throws(RESPDecodingError) -> Int64 {
        guard let n = Int64(line) else { throw .malformed(line) }
        return n
    }
}

/// Bytes from a server that are not RESP3.
enum RESPDecodingError: Error, Equatable {
    case unknownType(UInt8)
    case malformed(String)
    case badLength(Int64)
    case missingTerminator
    case lineTooLong
    case tooDeep
}
