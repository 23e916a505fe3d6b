/// Runs `body` with a string's UTF-8 bytes (no copy for native strings).
@inlinable @inline(__always)
func withUTF8<R, E: Error>(_ string: String, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
    var s = string
    let result: Result<R, E> = s.withUTF8 { utf8 in Result { () throws(E) in try body(UnsafeRawBufferPointer(utf8)) } }
    return try result.get()
}
