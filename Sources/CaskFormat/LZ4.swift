import CLZ4
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// LZ4 block compression through the system liblz4.
package enum LZ4 {
    /// The largest output `compress` can produce for `count` input bytes.
    package static func bound(_ count: Int) -> Int { Int(LZ4_compressBound(Int32(count))) }

    /// Compresses `source` into `destination`; returns the compressed size, or 0 when it did not fit.
    package static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
        guard source.count > 0, source.count <= Format.maximumValueLength else { return 0 }
        let src = source.baseAddress!.assumingMemoryBound(to: CChar.self)
        let dst = destination.baseAddress!.assumingMemoryBound(to: CChar.self)
        guard let stream = CompressionState.ofThisThread() else {
            return Int(max(LZ4_compress_default(src, dst, Int32(source.count), Int32(destination.count)), 0))
        }
        // A new chain of one block: the same independent block LZ4_compress_default makes,
        // without zeroing the 16 KiB hash table first (LZ4_resetStream_fast, liblz4 1.9.0+).
        LZ4_resetStream_fast(stream)
        let n = LZ4_compress_fast_continue(stream, src, dst, Int32(source.count), Int32(destination.count), 1)
        return Int(max(n, 0))
    }

    /// Decompresses `source` into `destination`. True only when the input is a well-formed block
    /// that produces exactly `destination.count` bytes; malformed input never reads or writes out
    /// of bounds (LZ4_decompress_safe).
    package static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        guard source.count > 0, destination.count > 0 else { return false }
        let n = LZ4_decompress_safe(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count))
        return Int(n) == destination.count
    }
}

/// One LZ4 compression state per thread, initialised once (`LZ4_initStream`) and kept until the
/// thread ends: a fresh state per call would zero its 16 KiB hash table every time.
enum CompressionState {
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { free($0) }
        return rc == 0 ? key : nil
    }()

    /// This thread's state; nil when none can be made (the caller then compresses without one).
    static func ofThisThread() -> UnsafeMutablePointer<LZ4_stream_t>? {
        guard let key else { return nil }
        if let state = pthread_getspecific(key) { return state.assumingMemoryBound(to: LZ4_stream_t.self) }
        let size = MemoryLayout<LZ4_stream_t>.size
        guard let raw = malloc(size) else { return nil }
        guard let stream = LZ4_initStream(raw, size), pthread_setspecific(key, raw) == 0 else {
            free(raw)
            return nil
        }
        return stream
    }
}
