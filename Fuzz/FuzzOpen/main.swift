import Cask
import Foundation

/// Builds a store directory from the input (split into files at 0xFF 0xFE markers, named as
/// segments and hint files in turn) and opens it: any input must give a store or a typed error.
let root = NSTemporaryDirectory() + "cask-fuzz-open-\(getpid())"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    try? FileManager.default.removeItem(atPath: root)
    try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    var parts: [[UInt8]] = [[]]
    var i = 0
    while i < bytes.count {
        if i + 1 < bytes.count && bytes[i] == 0xFF && bytes[i + 1] == 0xFE { parts.append([]); i += 2; continue }
        parts[parts.count - 1].append(bytes[i])
        i += 1
    }
    for (n, part) in parts.prefix(6).enumerated() {
        let name = String(format: "%010d", n / 2 + 1) + (n % 2 == 0 ? ".cask" : ".hint")
        FileManager.default.createFile(atPath: root + "/" + name, contents: Data(part))
    }
    var options = StoreOptions()
    options.compaction.isAutomatic = false
    options.logger.logLevel = .critical
    if let store = try? DiskStore(directory: root, options: options) {
        for key in store.keys().prefix(20) { _ = try? store.value(forKey: key) }
        try? store.close()
    }
    return 0
}
