/// Runs `body` with a string's UTF-8 bytes: in place for native and small strings (no copy, no
/// retain), through a native copy for bridged ones.
@inlinable @inline(__always)
package func withUTF8<R, E: Error>(_ string: String, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    let inPlace: Result<R, E>? = string.utf8.withContiguousStorageIfAvailable { utf8 in
        Result { () throws(E) in try body(UnsafeRawBufferPointer(utf8)) }
    }
    if let inPlace { return try inPlace.get() }
    var s = string
    let result: Result<R, E> = s.withUTF8 { utf8 in Result { () throws(E) in try body(UnsafeRawBufferPointer(utf8)) } }
    return try result.get()
}
