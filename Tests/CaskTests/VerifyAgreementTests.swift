import Foundation
import Testing
@testable import Cask
import CaskFormat
import CaskTesting

/// Differential test of `StoreVerifier` against the open (format-spec.md, "Verify" and
/// "Recovery on open"): 1,000 seeded damages, each to a copy of one small store on the simulated
/// file system. For each: when verify calls the store clean, an open keeps every key with its
/// value; when an open drops a key or finds damage, verify reported a problem or a torn tail;
/// and after the repair `cask verify --repair` performs, every operation works and every key
/// whose records were intact is kept with its value. A value returned is always the key's newest.
@Suite struct VerifyAgreementTests {
    static let trials: UInt64 = 1000

    @Test func verifyAndOpenAgreeOnSeededDamage() throws {
        let base = try AgreementBase.make()
        #expect(base.files.keys.filter { $0.hasSuffix(".cask") }.count >= 4, "\(base.files.keys.sorted())")
        #expect(base.files.keys.contains("INDEX") && base.files.keys.contains { $0.hasSuffix(".hint") })
        var failures: [String] = []
        for seed in 0..<Self.trials {
            var files = base.files
            let damage = Damage.apply(seed: seed, to: &files, base: base)
            let problems = Self.trial(files, damage: damage, base: base)
            failures += problems.map { "seed \(seed), damage \(damage): \($0)" }
        }
        for f in failures.prefix(25) { Issue.record(Comment(rawValue: f)) }
        #expect(failures.isEmpty, "\(failures.count) disagreements in \(Self.trials) damages")
    }

    /// What went wrong in one damaged copy (empty when nothing did).
    static func trial(_ files: [String: [UInt8]], damage: Damage, base: AgreementBase) -> [String] {
        var problems: [String] = []
        do {
            let report = try StoreVerifier(directory: AgreementBase.root, fileSystem: AgreementBase.install(files)).verify()
            let clean = report.problems.isEmpty && report.unreadable.isEmpty && report.tornTail == nil
            let open = try openAndRead(try AgreementBase.install(files), base: base)
            problems += open.wrong
            if clean && open.sawDamage {
                problems.append("verify reported the store clean, but the open \(open.summary)")
            }
            problems += try repairAndCheck(try AgreementBase.install(files), report: report, damage: damage, base: base)
        } catch {
            problems.append("unexpected error \(error)")
        }
        return problems
    }

    struct OpenOutcome {
        var wrong: [String] = []
        var sawDamage = false
        var summary = ""
    }

    /// A writing open that reads every key of the base store: values that are not the key's
    /// newest, and whether it dropped a key or found damage.
    static func openAndRead(_ fs: SimulatedFileSystem, base: AgreementBase) throws -> OpenOutcome {
        let store = try DiskStore(directory: AgreementBase.root, options: AgreementBase.options(fs))
        defer { try? store.close() }
        var outcome = OpenOutcome()
        var missing: [String] = []
        for (key, value) in base.latest.sorted(by: { $0.key < $1.key }) {
            guard let got = try store.value(forKey: key) else { missing.append(key); continue }
            if [UInt8](got) != value { outcome.wrong.append("open returned a value of \(key) that is not its newest (\(got.count) bytes)") }
        }
        let unknown = store.keys().filter { base.latest[$0] == nil }
        if !unknown.isEmpty { outcome.wrong.append("open returned keys that are not live: \(unknown.sorted())") }
        let s = store.statistics
        outcome.sawDamage = !missing.isEmpty || s.corruptRecords > 0 || s.damagedRanges > 0 || s.keysDroppedByRecovery > 0 || s.tornTailBytes > 0
        outcome.summary = "lost \(missing) (corrupt records \(s.corruptRecords), damaged ranges \(s.damagedRanges), dropped \(s.keysDroppedByRecovery), torn tail \(s.tornTailBytes))"
        return outcome
    }

    /// The repair of `cask verify --repair` (Sources/cask/VerifyCommand.swift): damaged hint files
    /// removed, an open, a scrub, and when anything was found the active segment sealed and a
    /// compaction; then a writing open, a put, reads and a clean verify.
    static func repairAndCheck(_ fs: SimulatedFileSystem, report: StoreVerifier.Report, damage: Damage, base: AgreementBase) throws -> [String] {
        for hint in Set(report.problems.map(\.file).filter { $0.hasSuffix(".hint") }) { try? fs.remove(hint) }
        let store = try DiskStore(directory: AgreementBase.root, options: AgreementBase.options(fs))
        let stats = store.statistics
        let dropped = try store.scrub()
        if !report.problems.isEmpty || stats.damagedRanges > 0 || stats.corruptRecords > 0 || dropped > 0 {
            try store.sealActiveSegment()
            try store.compact()
        }
        store.waitForBackgroundWork()
        try store.close()
        var problems: [String] = []
        let after = try DiskStore(directory: AgreementBase.root, options: AgreementBase.options(fs))
        try after.setValue(Array("after the repair".utf8), forKey: "new-key")
        let intact = damage.intactKeys(base)
        for (key, value) in base.latest {
            let got = try after.value(forKey: key).map { [UInt8]($0) }
            if got == nil && intact.contains(key) { problems.append("the repair lost \(key), whose records were intact") }
            if let got, got != value { problems.append("after the repair \(key) has a value that is not its newest") }
        }
        if try after.value(forKey: "new-key") == nil { problems.append("a put after the repair was not kept") }
        try after.close()
        let check = try StoreVerifier(directory: AgreementBase.root, fileSystem: fs).verify()
        if !check.problems.isEmpty || check.tornTail != nil {
            problems.append("verify after the repair: \(check.problems.map(\.description)) torn tail \(check.tornTail?.description ?? "none")")
        }
        return problems
    }
}
