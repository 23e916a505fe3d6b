import CaskFormat

/// Runs `body` with the UTF-8 bytes of `key`, after checking the key's length.
func withKeyBytes<R>(_ key: String, _ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
    var key = key
    let result: Result<R, CaskError> = key.withUTF8 { utf8 in
        Result { () throws(CaskError) in
            guard utf8.count > 0 else { throw CaskError.emptyKey }
            guard utf8.count <= Format.maximumKeyLength else {
                throw CaskError.keyTooLong(length: utf8.count, maximum: Format.maximumKeyLength)
            }
            return try body(UnsafeRawBufferPointer(utf8))
        }
    }
    return try result.get()
}

@inline(__always)
func withStoredBytes<R>(_ compressed: [UInt8]?, or value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
    guard let compressed else { return try body(value) }
    let result: Result<R, CaskError> = compressed.withUnsafeBytes { raw in Result { () throws(CaskError) in try body(raw) } }
    return try result.get()
}
