import ArgumentParser

/// `cask-harness`: the crash, disk-full and exit harnesses the test suite drives, and the
/// whole-store benchmarks. Not installed with `cask`: these verbs write test patterns into a store.
@main
struct HarnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cask-harness",
        abstract: "Crash, disk-full and exit harnesses and whole-store benchmarks for Cask's own tests.",
        subcommands: [Torture.self, Fill.self, ExitWithoutClose.self, SoakWriter.self, SoakReader.self, Populate.self, Bench.self, CompactionBench.self, Footprint.self, CacheStep.self, Churn.self, HitRatio.self, MemoryHitRatio.self, LoaderHit.self, PrefixRemovalBench.self, TagRemovalBench.self, GrowthBench.self, SealCost.self]
    )
}
