/// Names of the files in a store directory (format-spec.md, "Directory layout"), in one place.
enum FileNames {
    static let lock = "LOCK"
    static let segmentSuffix = ".cask"
    static let hintSuffix = ".hint"
    static let temporarySuffix = ".tmp"
    static let trashDirectory = "trash"

    /// `0000000042.cask`: ten decimal digits, so names sort in id order.
    static func segment(_ id: UInt32) -> String { padded(id) + segmentSuffix }
    static func hint(_ id: UInt32) -> String { padded(id) + hintSuffix }

    static func padded(_ id: UInt32) -> String {
        let digits = String(id)
        return String(repeating: "0", count: max(0, 10 - digits.count)) + digits
    }

    /// The id in a segment or hint file name, or nil when `name` is not one.
    static func id(in name: String, suffix: String) -> UInt32? {
        guard name.hasSuffix(suffix) else { return nil }
        let stem = name.dropLast(suffix.count)
        guard stem.count == 10, stem.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt32(stem)
    }

    /// The folder part of `path` ("." for a bare name, "/" for a file at the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
