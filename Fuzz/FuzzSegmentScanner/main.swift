@_spi(Fuzzing) import CaskFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = FuzzEntryPoints.scanSegment(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
