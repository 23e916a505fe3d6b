import Foundation

/// One sample of a store's directory while the churn runs.
struct DiskPoint: Codable {
    /// Seconds since the churn began.
    var seconds: Double
    /// Bytes allocated by the files of the store's directory (like du).
    var diskBytes: Int64
    /// Bytes the process had caused to be written to storage since the churn began.
    var writeBytes: Int64
}

/// Samples a directory's disk use and the process's storage writes on a background thread,
/// every `interval`, so that the timed thread never walks the directory itself.
final class DiskSampler: @unchecked Sendable {
    private let directory: String
    private let intervalNanoseconds: UInt64
    private let origin: UInt64
    private let writeBase: Int64
    private let lock = NSLock()
    private var points: [DiskPoint] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init(directory: String, intervalNanoseconds: UInt64, origin: UInt64, writeBase: Int64) {
        self.directory = directory
        self.intervalNanoseconds = intervalNanoseconds
        self.origin = origin
        self.writeBase = writeBase
    }

    /// Starts sampling on a thread of its own.
    func start() {
        let thread = Thread { [self] in loop() }
        thread.name = "disk-sampler"
        thread.start()
    }

    /// Stops sampling, takes one last sample and returns them all.
    func stop() -> [DiskPoint] {
        lock.withLock { stopping = true }
        finished.wait()
        sample()
        return lock.withLock { points }
    }

    private func loop() {
        var next = ProcessProbe.now()
        while !lock.withLock({ stopping }) {
            sample()
            next += intervalNanoseconds
            let now = ProcessProbe.now()
            if next > now { usleep(useconds_t((next - now) / 1000)) } else { next = now }
        }
        finished.signal()
    }

    private func sample() {
        let point = DiskPoint(
            seconds: Double(ProcessProbe.now() &- origin) / 1e9,
            diskBytes: ProcessProbe.diskBytes(directory),
            writeBytes: ProcessProbe.storageWriteBytes() - writeBase)
        lock.withLock { points.append(point) }
    }
}
