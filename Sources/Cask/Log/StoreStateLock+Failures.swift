extension StoreStateLock {
    /// Counts a failure of background work (``StoreStatistics/backgroundFailures``) and logs it
    /// as "`what`: error" after the lock is released (a log handler may write to a file or a
    /// socket). The work is retried, or left to the write that needs it; nothing stored is lost.
    func noteBackgroundFailure(_ what: String, _ error: CaskError) {
        let logger = withLock { s in
            s.stats.backgroundFailures += 1
            return s.options.logger
        }
        logger.warning("\(what): \(error)")
    }
}
