import CaskFormat

/// Applies a ``CompressionPolicy`` to one value.
enum Compression {
    /// The LZ4 form of `value` when the policy asks for it and it saves enough; nil to store as is.
    static func compress(_ value: UnsafeRawBufferPointer, policy: CompressionPolicy) -> [UInt8]? {
        let keepBelow: Int
        switch policy {
        case .never:
            return nil
        case .automatic(let minimumSize):
            guard value.count >= max(1, minimumSize) else { return nil }
            keepBelow = value.count - value.count / 16
        case .always:
            guard value.count > 0 else { return nil }
            keepBelow = value.count
        }
        let bound = LZ4.bound(value.count)
        var size = 0
        let out = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            size = LZ4.compress(value, into: UnsafeMutableRawBufferPointer(buffer))
            count = size
        }
        return size > 0 && size < keepBelow ? out : nil
    }

    /// Decompresses a stored value into `destination`, which is exactly the original length.
    static func decompress(_ stored: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        LZ4.decompress(stored, into: destination)
    }
}
