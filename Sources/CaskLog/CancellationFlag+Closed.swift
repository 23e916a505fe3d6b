import CaskSupport

package extension CancellationFlag {
    /// Throws ``CaskError/closed`` once ``cancel()`` was called.
    @inline(__always)
    package func check() throws(CaskError) {
        if isCancelled { throw .closed }
    }
}
