/// One engine's figures for one phase of the workload. Rates count user bytes (key + value).
struct PhaseResult: Codable {
    var engine: String
    var phase: String
    var operations: Int
    var seconds: Double
    var operationsPerSecond: Double
    var megabytesPerSecond: Double
    /// Latency percentiles in microseconds (HdrHistogram, 3 significant digits).
    var p50: Double
    var p99: Double
    var p999: Double
    /// Bytes allocated on disk by the store's directory after the phase.
    var diskBytes: Int64
    /// Bytes the process caused to be written to storage during the phase.
    var storageWriteBytes: Int64
    /// storageWriteBytes / user bytes written (write phases only).
    var writeAmplification: Double?
    /// Peak resident memory of the engine's process so far.
    var peakResidentBytes: Int64
}

/// Disk use during the overwrite phase.
struct DiskSample: Codable {
    var engine: String
    var bytesPut: Int64
    var diskBytes: Int64
}

/// What one engine's child process reports.
struct EngineReport: Codable {
    var engine: String
    var configuration: String
    /// Resident memory of the harness (keys and values) before the engine opened.
    var harnessResidentBytes: Int64
    var results: [PhaseResult]
    var samples: [DiskSample]
}
