import CaskFormat

extension StoreState {
    /// Makes the pin record at `location` the key's live one, replacing an earlier one, and
    /// counts its bytes as live. The index entry's flag is not changed here.
    mutating func setLivePinRecord(_ location: PinRecordLocation, forKey key: UnsafeRawBufferPointer) {
        segmentSet.addLive(Int64(location.size), in: location.segment)
        account(ReleasedRecords(pin: keys.setLivePin(location, forKey: key)))
    }

    /// Sets or clears the pinned flag of the key's index entry in place (sequence, location,
    /// times and expiry stay) and makes `record` the key's live pin record.
    mutating func applyPin(_ pinned: Bool, record: PinRecordLocation, forKey key: UnsafeRawBufferPointer) {
        segmentSet.addLive(Int64(record.size), in: record.segment)
        account(ReleasedRecords(pin: keys.applyPin(pinned, record: record, forKey: key)))
        limiter.pinsChanged()   // an unpinned item ranks lower: candidates from before are stale
    }
}
