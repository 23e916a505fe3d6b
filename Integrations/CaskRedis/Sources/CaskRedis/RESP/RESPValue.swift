import NIOCore

/// A RESP3 value, as Redis sends them (RESP2's types included).
enum RESPValue: Sendable, Equatable {
    case simpleString(String)
    case error(String)
    case integer(Int64)
    /// A bulk string's bytes; RESP2's null bulk string is ``null``.
    case bulkString([UInt8])
    case array([RESPValue])
    case null
    case boolean(Bool)
    case double(Double)
    case bigNumber(String)
    case verbatim(String)
    case map([RESPValue])      // key, value, key, value…
    case set([RESPValue])
    /// An out-of-band message (an invalidation, a published message).
    case push([RESPValue])

    /// The value as text: simple, bulk and verbatim strings.
    var string: String? {
        switch self {
        case .simpleString(let s), .verbatim(let s): s
        case .bulkString(let b): String(decoding: b, as: UTF8.self)
        default: nil
        }
    }

    /// The value as bytes: bulk and simple strings.
    var bytes: [UInt8]? {
        switch self {
        case .bulkString(let b): b
        case .simpleString(let s): Array(s.utf8)
        default: nil
        }
    }

    /// The elements of an array, set or push; nil for anything else.
    var elements: [RESPValue]? {
        switch self {
        case .array(let a), .set(let a), .push(let a), .map(let a): a
        default: nil
        }
    }
}

/// The RESP3 wire form of a command: an array of bulk strings.
enum RESPCommand {
    /// Appends `arguments` as one command to `buffer`.
    static func write(_ arguments: [[UInt8]], into buffer: inout ByteBuffer) {
        buffer.writeString("*\(arguments.count)\r\n")
        for a in arguments {
            buffer.writeString("$\(a.count)\r\n")
            buffer.writeBytes(a)
            buffer.writeStaticString("\r\n")
        }
    }
}
