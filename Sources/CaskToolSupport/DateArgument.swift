import ArgumentParser
import Foundation

extension ArgumentValues {
    /// What `--date` accepts, for help texts and messages.
    package static let dateForms = "2026-11-01 (a plain date means midnight UTC), 2026-11-01T10:00:00Z, 2026-11-01T10:00:00+02:00 or 2026-11-01T10:00 (a time without a zone is UTC)"

    /// A point in time in ISO 8601 (RFC 3339) form: a plain date `2026-11-01` (midnight UTC), or
    /// a date and time `2026-11-01T10:00`, with seconds (`:30`) and a fraction (`.250`) if wanted,
    /// and a zone `Z`, `+02:00`, `+0200` or `-05`; a time without a zone is UTC. Strict: every
    /// field in range (no 30 February, no hour 25) and nothing after the end (Foundation's
    /// parsers accept both, and a date-only parser drops a time it does not read).
    package static func date(_ text: String, option: String) throws -> Date {
        var scanner = DateScanner(Array(text.utf8))
        guard let seconds = scanner.secondsSince1970() else {
            throw ValidationError("\(option) must be an ISO 8601 date or date and time, like \(dateForms); got '\(text)'")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// Reads `yyyy-MM-dd[(T|t| )HH:mm[:ss[.f…]][Z|±HH[[:]mm]]]` from UTF-8 bytes.
private struct DateScanner {
    private let bytes: [UInt8]
    private var i = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Seconds since 1970 (UTC), or nil when the text is not one of the accepted forms.
    mutating func secondsSince1970() -> Double? {
        guard let year = digits(4), take("-"), let month = digits(2), take("-"), let day = digits(2),
              (1...12).contains(month), (1...Self.days(inMonth: month, year: year)).contains(day) else { return nil }
        let midnight = Double(Self.daysSince1970(year: year, month: month, day: day) * 86_400)
        if i == bytes.count { return midnight }
        guard take("T") || take("t") || take(" "), let time = timeOfDay(), let offset = zoneOffset(), i == bytes.count else { return nil }
        return midnight + time - offset
    }

    /// `HH:mm[:ss[.f…]]` in seconds.
    private mutating func timeOfDay() -> Double? {
        guard let hour = digits(2), take(":"), let minute = digits(2), hour < 24, minute < 60 else { return nil }
        var seconds = Double(hour * 3600 + minute * 60)
        guard take(":") else { return seconds }
        guard let second = digits(2), second < 60 else { return nil }
        seconds += Double(second)
        guard take(".") || take(",") else { return seconds }
        let start = i
        while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        guard i > start, let fraction = Double("0." + String(decoding: bytes[start..<i], as: UTF8.self)) else { return nil }
        return seconds + fraction
    }

    /// The zone's offset from UTC in seconds: 0 for `Z` or no zone.
    private mutating func zoneOffset() -> Double? {
        if i == bytes.count || take("Z") || take("z") { return 0 }
        let sign: Double = take("+") ? 1 : take("-") ? -1 : 0
        guard sign != 0, let hours = digits(2), hours < 24 else { return nil }
        if i == bytes.count { return sign * Double(hours * 3600) }
        _ = take(":")
        guard let minutes = digits(2), minutes < 60 else { return nil }
        return sign * Double(hours * 3600 + minutes * 60)
    }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard i < bytes.count, bytes[i] == UInt8(ascii: character) else { return false }
        i += 1
        return true
    }

    /// Exactly `count` decimal digits as a number.
    private mutating func digits(_ count: Int) -> Int? {
        guard i + count <= bytes.count, bytes[i..<(i + count)].allSatisfy(isDigit) else { return nil }
        defer { i += count }
        return bytes[i..<(i + count)].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    private static func days(inMonth month: Int, year: Int) -> Int {
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
