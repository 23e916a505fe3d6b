import CaskSupport

extension CancellationFlag {
    /// Throws ``CaskError/closed`` once ``cancel()`` was called.
    @inline(__always)
    func check() throws(CaskError) {
        if isCancelled { throw .closed }
    }
}
