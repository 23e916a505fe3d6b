import Foundation
import NIOCore
import Testing
@testable import CaskRedis

/// The RESP3 parser against values a reference encoder writes (whole, and split at every
/// point), and against hostile bytes: it never traps, never allocates what a length claims
/// before the bytes are there, and throws for what is not RESP3.
@Suite struct RESPDecoderTests {
    /// Seeded RESP values.
    struct Generator {
        var rng: SeededGenerator
        init(state: UInt64) { rng = SeededGenerator(state: state) }

        mutating func value(depth: Int = 0) -> RESPValue {
            let kinds = depth > 3 ? 9 : 13
            switch Int.random(in: 0..<kinds, using: &rng) {
            case 0: return .simpleString(text())
            case 1: return .error(text())
            case 2: return .integer(Int64.random(in: .min ... .max, using: &rng))
            case 3: return .bulkString((0..<Int.random(in: 0..<40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            case 4: return .null
            case 5: return .boolean(Bool.random(using: &rng))
            case 6: return .double(Double(Int.random(in: -1_000_000...1_000_000, using: &rng)) / 64)
            case 7: return .bigNumber(String(UInt64.random(in: 0 ... .max, using: &rng)) + "123456789")
            case 8: return .verbatim(text())
            case 9: return .array(children(depth))
            case 10: return .set(children(depth))
            case 11: return .push(children(depth))
            default: return .map(children(depth, even: true))
            }
        }

        mutating func text() -> String {
            String((0..<Int.random(in: 0..<20, using: &rng)).map { _ in "abcxyz019 :-_".randomElement(using: &rng)! })
        }

        mutating func children(_ depth: Int, even: Bool = false) -> [RESPValue] {
            let n = Int.random(in: 0..<5, using: &rng) * (even ? 2 : 1)
            return (0..<n).map { _ in value(depth: depth + 1) }
        }
    }

    /// The reference encoder: every RESP3 type, written as the protocol's text says.
    static func encode(_ v: RESPValue) -> [UInt8] {
        func aggregate(_ mark: String, _ items: [RESPValue], pairs: Bool = false) -> [UInt8] {
            Array("\(mark)\(pairs ? items.count / 2 : items.count)\r\n".utf8) + items.flatMap(encode)
        }
        switch v {
        case .simpleString(let s): return Array("+\(s)\r\n".utf8)
        case .error(let s): return Array("-\(s)\r\n".utf8)
        case .integer(let n): return Array(":\(n)\r\n".utf8)
        case .bulkString(let b): return Array("$\(b.count)\r\n".utf8) + b + [13, 10]
        case .null: return Array("_\r\n".utf8)
        case .boolean(let b): return Array("#\(b ? "t" : "f")\r\n".utf8)
        case .double(let d): return Array(",\(d)\r\n".utf8)
        case .bigNumber(let s): return Array("(\(s)\r\n".utf8)
        case .verbatim(let s): return Array("=\(s.utf8.count + 4)\r\ntxt:\(s)\r\n".utf8)
        case .array(let a): return aggregate("*", a)
        case .set(let a): return aggregate("~", a)
        case .push(let a): return aggregate(">", a)
        case .map(let a): return aggregate("%", a, pairs: true)
        }
    }

    @Test func everyValueRoundTripsWholeAndSplitAnywhere() throws {
        var g = Generator(state: 44)
        for _ in 0..<2_000 {
            let value = g.value()
            let bytes = Self.encode(value)
            var whole = ByteBuffer(bytes: bytes)
            #expect(try RESPDecoder.parse(&whole) == value)
            #expect(whole.readableBytes == 0)
            let cut = Int.random(in: 0..<bytes.count, using: &g.rng)
            var part = ByteBuffer(bytes: bytes[..<cut])
            #expect(try RESPDecoder.parse(&part) == nil, "a value cut at \(cut) of \(bytes.count) bytes parsed")
            #expect(part.readableBytes == cut)     // nothing consumed
            part.writeBytes(bytes[cut...])
            #expect(try RESPDecoder.parse(&part) == value)
        }
    }

    @Test func pipelinedRepliesParseInOrder() throws {
        var g = Generator(state: 7)
        let values = (0..<50).map { _ in g.value() }
        var buffer = ByteBuffer(bytes: values.flatMap(Self.encode))
        for v in values { #expect(try RESPDecoder.parse(&buffer) == v) }
        #expect(try RESPDecoder.parse(&buffer) == nil)
    }

    @Test func hostileLengthsAndNestingThrowBeforeAllocating() throws {
        for text in ["$999999999999\r\n", "$-5\r\n", "*99999999999\r\n", "%-2\r\n", "$abc\r\n", ":12x\r\n",
                     "#x\r\n", ",nope\r\n", "(12a\r\n", "_junk\r\n", "?\r\n", "$3\r\nabcXY"] {
            var b = ByteBuffer(string: text)
            #expect(throws: RESPDecodingError.self, "\(text.debugDescription)") { try RESPDecoder.parse(&b) }
        }
        var attributes = ByteBuffer(string: String(repeating: "|0\r\n", count: 40_000) + ":1\r\n")   // no stack overflow
        #expect(throws: RESPDecodingError.tooDeep) { try RESPDecoder.parse(&attributes) }
        var deep = ByteBuffer(string: String(repeating: "*1\r\n", count: 100) + ":1\r\n")
        #expect(throws: RESPDecodingError.tooDeep) { try RESPDecoder.parse(&deep) }
        var long = ByteBuffer(string: "+" + String(repeating: "a", count: 70_000))
        #expect(throws: RESPDecodingError.lineTooLong) { try RESPDecoder.parse(&long) }
        // A claimed count far above what the bytes hold reserves no more than they could.
        var many = ByteBuffer(string: "*16000000\r\n:1\r\n")
        #expect(try RESPDecoder.parse(&many) == nil)
    }

    @Test func randomAndMutatedBytesNeverTrap() {
        var g = Generator(state: 99)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = Self.encode(g.value())
                for _ in 0..<Int.random(in: 1...4, using: &g.rng) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &g.rng)] = UInt8.random(in: 0...255, using: &g.rng)
                }
            } else {
                bytes = (0..<Int.random(in: 0..<64, using: &g.rng)).map { _ in UInt8.random(in: 0...255, using: &g.rng) }
            }
            var buffer = ByteBuffer(bytes: bytes)
            // Parse until it throws, wants more, or the input is used up: any outcome but a trap.
            while buffer.readableBytes > 0, let _ = try? RESPDecoder.parse(&buffer) {}
        }
    }

    @Test func commandsAreArraysOfBulkStrings() throws {
        var buffer = ByteBuffer()
        RESPCommand.write([Array("SET".utf8), Array("k\r\n".utf8), []], into: &buffer)
        #expect(String(buffer: buffer) == "*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$0\r\n\r\n")
        #expect(try RESPDecoder.parse(&buffer) == .array([.bulkString(Array("SET".utf8)), .bulkString(Array("k\r\n".utf8)), .bulkString([])]))
    }
}
