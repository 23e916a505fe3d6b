import Foundation
import Testing
@testable import Cask
@_spi(Fuzzing) import CaskFormat

/// Replays the fuzzers' seed corpus and every kept crash input through the same entry points.
@Suite struct FuzzRegressionTests {
    static let fuzz = repositoryRoot.appendingPathComponent("Fuzz")

    func inputs(_ folder: String, prefix: String = "") throws -> [Data] {
        let dir = Self.fuzz.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return try names.filter { $0.hasPrefix(prefix) && !$0.hasPrefix(".") }.sorted()
            .map { try Data(contentsOf: dir.appendingPathComponent($0)) }
    }

    @Test func seedsDecodeAndKeptCrashInputsNoLongerCrash() throws {
        let segments = try inputs("corpus/FuzzSegmentScanner")
        #expect(segments.count >= 3)
        for s in segments { #expect(s.withUnsafeBytes { FuzzEntryPoints.scanSegment($0) } > 0) }
        for h in try inputs("corpus/FuzzHintParser") { #expect(h.withUnsafeBytes { FuzzEntryPoints.parseHint($0) } > 0) }
        let records = try inputs("corpus/FuzzRecordDecoder").map { r in r.withUnsafeBytes { FuzzEntryPoints.decodeRecords($0) } }
        #expect(records.filter { $0 > 0 }.count >= 3)
        for b in try inputs("corpus/FuzzLZ4") { #expect(b.withUnsafeBytes { FuzzEntryPoints.decompress($0) }) }
        // Crash inputs found by tools/fuzz.sh: each must now return normally.
        for r in try inputs("regressions") {
            r.withUnsafeBytes { raw in
                _ = FuzzEntryPoints.decodeRecords(raw)
                _ = FuzzEntryPoints.scanSegment(raw)
                _ = FuzzEntryPoints.parseHint(raw)
                _ = FuzzEntryPoints.decompress(raw)
            }
        }
    }
}
