import ArgumentParser
import Foundation

/// Parses the values of command-line options that have units, and names keys. Every failure is a
/// `ValidationError` that says what was given and what is accepted (exit status 64).
package enum ArgumentValues {
    /// The longest duration accepted: 100 years.
    package static let maximumSeconds: Double = 100 * 365.25 * 86_400

    /// A duration such as `90` (seconds), `1500ms`, `90s`, `15m`, `2h` or `7d`: at least 1 ms
    /// (Cask's times are whole milliseconds) and at most 100 years; returns whole milliseconds.
    package static func milliseconds(_ text: String, option: String) throws -> Int64 {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        guard let (number, scale) = number(text, units: units) else {
            throw ValidationError("\(option) must be a duration like 90s, 15m, 2h or 7d (a plain number is seconds); got '\(text)'")
        }
        let seconds = number * scale
        guard seconds >= 0.001, seconds <= maximumSeconds else {
            throw ValidationError("\(option) must be at least 1ms and at most 100 years; got '\(text)'")
        }
        return max(1, Int64((seconds * 1000).rounded()))
    }

    /// A size such as `4096` (bytes), `512KiB`, `64MiB`, `2GiB`, or with decimal units `500KB`,
    /// `2GB`; `K`, `M`, `G`, `T` alone are binary (as `ls -h` prints them). A whole number of
    /// bytes, at most 2^62.
    package static func bytes(_ text: String, option: String) throws -> Int {
        let units: [(String, Double)] = [
            ("KiB", 0x1p10), ("MiB", 0x1p20), ("GiB", 0x1p30), ("TiB", 0x1p40),
            ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12),
            ("K", 0x1p10), ("M", 0x1p20), ("G", 0x1p30), ("T", 0x1p40), ("B", 1),
        ]
        guard let (number, scale) = number(text, units: units) else {
            throw ValidationError("\(option) must be a size like 4096, 512KiB, 64MiB or 2GiB; got '\(text)'")
        }
        let value = number * scale
        guard value >= 0, value <= 0x1p62 else {
            throw ValidationError("\(option) must be between 0 and 2^62 bytes; got '\(text)'")
        }
        guard value == value.rounded(.down) else {
            throw ValidationError("\(option) must be a whole number of bytes; got '\(text)'")
        }
        return Int(value)
    }

    /// A finite number and the scale of its unit suffix (1 without one), or nil.
    private static func number(_ text: String, units: [(String, Double)]) -> (Double, Double)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let unit = units.first { trimmed.hasSuffix($0.0) && Double(trimmed.dropLast($0.0.count)) != nil }
        guard let value = Double(unit.map { String(trimmed.dropLast($0.0.count)) } ?? trimmed), value.isFinite else { return nil }
        return (value, unit?.1 ?? 1)
    }

    /// A whole number of at least `minimum` and at most `maximum`.
    package static func count(_ value: Int, option: String, minimum: Int = 0, maximum: Int = .max) throws {
        guard value >= minimum else { throw ValidationError("\(option) must be at least \(minimum); got \(value)") }
        guard value <= maximum else { throw ValidationError("\(option) must be at most \(maximum); got \(value)") }
    }

    /// The key a command names: the argument itself, or with `--key-hex` the UTF-8 text its hex
    /// digits spell. 1 to 1,024 bytes.
    package static func key(_ argument: String, isHex: Bool) throws -> String {
        var key = argument
        if isHex {
            let digits = Array(argument.utf8)
            guard digits.count % 2 == 0, let bytes = hexBytes(digits) else {
                throw ValidationError("--key-hex needs an even number of hex digits (0-9, a-f); got '\(argument)'")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ValidationError("the key's bytes (\(argument)) are not UTF-8 text; Cask keys are UTF-8 strings")
            }
            key = text
        }
        guard !key.isEmpty else { throw ValidationError("the key must not be empty") }
        guard key.utf8.count <= 1024 else { throw ValidationError("the key is \(key.utf8.count) bytes long; at most 1,024 are allowed") }
        return key
    }

    private static func hexBytes(_ digits: [UInt8]) -> [UInt8]? {
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        var i = 0
        while i + 1 < digits.count {
            guard let high = value(digits[i]), let low = value(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        return bytes
    }

    /// `text` with control characters and backslashes escaped (`\n`, `\t`, `\x1b`, `\\`), for
    /// one-line table cells.
    package static func escaped(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f || (0x80..<0xa0).contains(scalar.value) {
                    out += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Whether `text` holds a character that ``escaped(_:)`` would change: a C0 or C1 control
    /// character, DEL or a backslash (one pass over the UTF-8 bytes, no allocation).
    package static func needsEscaping(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7f || byte == UInt8(ascii: "\\") || (previous == 0xC2 && (0x80...0x9F).contains(byte)) {
                return true
            }
            previous = byte
        }
        return false
    }

    /// The key's UTF-8 bytes in lowercase hex.
    package static func hex(_ text: String) -> String {
        text.utf8.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
