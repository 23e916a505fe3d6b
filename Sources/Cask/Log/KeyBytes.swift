import CaskFormat

/// Runs `body` with the UTF-8 bytes of `key`, after checking the key's length.
func withKeyBytes<R>(_ key: String, _ body: (UnsafeRawBufferPointer) throws(CaskError) -> R) throws(CaskError) -> R {
    var key = key
    let result: Result<R, CaskError> = key.withUTF8 { utf8 in
        Result { () throws(CaskError) in
            let bytes = UnsafeRawBufferPointer(utf8)
            try checkKeyLength(bytes)
            return try body(bytes)
        }
    }
    return try result.get()
}

/// Throws ``CaskError/emptyKey`` or ``CaskError/keyTooLong(length:maximum:)`` for a key no
/// write accepts. Reads check it too: a key that can never be stored is a bug in the caller,
/// and answering nil would make it look like a permanent miss.
@inline(__always)
func checkKeyLength(_ utf8: UnsafeRawBufferPointer) throws(CaskError) {
    guard utf8.count > 0 else { throw CaskError.emptyKey }
    guard utf8.count <= Format.maximumKeyLength else {
        throw CaskError.keyTooLong(length: utf8.count, maximum: Format.maximumKeyLength)
    }
}
