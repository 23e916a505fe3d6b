import CaskFormat

extension StoreState {
    /// Makes the pin record at `location` the key's live one, replacing an earlier one, and
    /// counts its bytes as live. The index entry's flag is not changed here.
    mutating func setLivePinRecord(_ location: PinRecordLocation, forKey key: UnsafeRawBufferPointer) {
        if let old = pinRecords.updateValue(location, forKey: Array(key)) { forgetPinRecord(old) }
        usage[location.segment]?.liveBytes += Int64(location.size)
        liveBytes += Int64(location.size)
    }

    /// The key's pin record (if any) is dead: its value record was replaced or removed.
    @inline(__always)
    mutating func dropPinRecord(forKey key: UnsafeRawBufferPointer) {
        guard !pinRecords.isEmpty, let old = pinRecords.removeValue(forKey: Array(key)) else { return }
        forgetPinRecord(old)
    }

    /// Accounts for a pin record that is no longer live.
    mutating func forgetPinRecord(_ old: PinRecordLocation) {
        usage[old.segment]?.liveBytes -= Int64(old.size)
        liveBytes -= Int64(old.size)
    }

    /// Sets or clears the pinned flag of the key's index entry in place (sequence, location,
    /// times and expiry stay) and makes `record` the key's live pin record.
    mutating func applyPin(_ pinned: Bool, record: PinRecordLocation, forKey key: UnsafeRawBufferPointer) {
        index.withEntry(forKey: key) { e in
            if pinned { e.flags |= Format.RecordFlag.pinned } else { e.flags &= ~Format.RecordFlag.pinned }
        }
        setLivePinRecord(record, forKey: key)
        candidatesGeneration &+= 1   // an unpinned item ranks lower: candidates from before are stale
    }
}
