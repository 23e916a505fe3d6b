import CaskToolSupport
import Foundation
import Testing

/// The tools' number formatting and option parsing (Sources/CaskToolSupport).
@Suite struct ToolFormattingTests {
    @Test func decimalsRoundAndPad() {
        #expect(Formatting.decimal(1.005, places: 2) == "1.00" || Formatting.decimal(1.005, places: 2) == "1.01")
        #expect(Formatting.decimal(2, places: 2) == "2.00")
        #expect(Formatting.decimal(0.05, places: 1) == "0.1")
        #expect(Formatting.decimal(-1.25, places: 1) == "-1.3" || Formatting.decimal(-1.25, places: 1) == "-1.2")
        #expect(Formatting.decimal(-0.01, places: 1) == "0.0")
        #expect(Formatting.decimal(1234.5678, places: 3) == "1234.568")
        #expect(Formatting.decimal(7.6, places: 0) == "8")
    }

    @Test func sizesAndDurations() {
        #expect(Formatting.bytes(100) == "100 B")
        #expect(Formatting.bytes(1536) == "1.5 KiB")
        #expect(Formatting.bytes(64 << 20) == "64.0 MiB")
        #expect(Formatting.duration(0.25) == "250ms")
        #expect(Formatting.duration(90) == "90s")
        #expect(Formatting.duration(600) == "10m")
        #expect(Formatting.duration(3 * 86_400) == "3d")
    }

    @Test func optionValuesWithUnits() throws {
        #expect(try ArgumentValues.milliseconds("90s", option: "--ttl") == 90_000)
        #expect(try ArgumentValues.milliseconds("1500ms", option: "--ttl") == 1_500)
        #expect(try ArgumentValues.milliseconds("2", option: "--ttl") == 2_000)
        #expect(try ArgumentValues.milliseconds("7d", option: "--ttl") == 604_800_000)
        #expect(try ArgumentValues.bytes("512KiB", option: "--size") == 524_288)
        #expect(try ArgumentValues.bytes("2G", option: "--size") == 2 << 30)
        #expect(try ArgumentValues.bytes("2GB", option: "--size") == 2_000_000_000)
        #expect(try ArgumentValues.bytes("4096", option: "--size") == 4096)
        for bad in ["", "-1s", "nan", "infs", "1e300"] { #expect(throws: (any Error).self) { try ArgumentValues.milliseconds(bad, option: "--ttl") } }
        for bad in ["-1", "1e30G", "x", "NaN"] { #expect(throws: (any Error).self) { try ArgumentValues.bytes(bad, option: "--size") } }
        #expect(ArgumentValues.escaped("a\nb\u{1b}\\") == "a\\nb\\x1b\\\\")
        #expect(ArgumentValues.hex("key") == "6b6579")
    }

    /// `--date`: a plain date is midnight UTC, a time without a zone is UTC, a zone moves it;
    /// a field out of range or anything after the end is refused (Foundation's parsers roll
    /// 2027-02-30 over to March and read a date-time as its date).
    @Test func datesAreStrictISO8601() throws {
        let cases: [(String, Double)] = [
            ("2027-01-01", 1_798_761_600), ("2027-01-01T10:00:00Z", 1_798_797_600), ("2027-01-01T10:00:00", 1_798_797_600),
            ("2027-01-01t10:00z", 1_798_797_600), ("2027-01-01 10:00:00Z", 1_798_797_600), ("2027-01-01T10:00:00+02:00", 1_798_790_400),
            ("2027-01-01T10:00:00+0200", 1_798_790_400), ("2027-01-01T08:00:00-00", 1_798_790_400), ("2027-01-01T10:00:00.25Z", 1_798_797_600.25),
            ("2024-02-29", 1_709_164_800), ("1969-12-31T23:59:59Z", -1),
        ]
        for (text, seconds) in cases {
            #expect(try ArgumentValues.date(text, option: "--date").timeIntervalSince1970 == seconds, "\(text)")
        }
        for bad in ["", "2027", "2027-1-1", "2027-13-01", "2027-02-29", "2027-02-30", "2027-01-01T24:00:00Z", "2027-01-01T10:60Z",
                    "2027-01-01T10:00:61Z", "2027-01-01T10:00:00Zjunk", "2027-01-01T10", "2027-01-01T10:00:00.Z", "2027-01-01T10:00+2",
                    " 2027-01-01", "01/02/2027", "-5"] {
            #expect(throws: (any Error).self, "\(bad)") { try ArgumentValues.date(bad, option: "--date") }
        }
    }

    /// A value file that names nothing readable is bad input (64); one that is there but whose
    /// open or read fails (EIO, ENOSPC: what fiu-run's open faults give) is an I/O error (74).
    @Test func inputErrorsSplitBadInputFromFailedIO() {
        for code in [ENOENT, ENOTDIR, EACCES, EISDIR] {
            #expect(InputError(source: "f", call: "open", errno: code).exitCode.rawValue == 64, "errno \(code)")
        }
        for (call, code) in [("open", EIO), ("open", ENOSPC), ("open", EMFILE), ("read", EIO)] {
            let error = InputError(source: "f", call: call, errno: code)
            #expect(error.exitCode.rawValue == 74 && error.description.contains("(errno \(code))"), "\(call) errno \(code)")
        }
        #expect(OutputError(errno: ENOSPC).description.contains("(errno \(ENOSPC))"))
    }
}
