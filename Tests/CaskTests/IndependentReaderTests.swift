import Foundation
import Testing
@testable import Cask
import CaskFormat

/// tools/caskdump.py reads a store from format-spec.md alone; it must agree with `cask ls --json`
/// and with the values the Swift library returns.
@Suite struct IndependentReaderTests {

    func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, data)
    }

    struct Item: Decodable, Equatable {
        var key: String
        var size: Int
        var storedSize: Int
        var compressed: Bool
        var pinned: Bool
        var expiryTime: Int64?
        var staleWindow: Bool
        var tags: [String]?
    }

    /// Also with encryption on (format version 7): the reader opens every sealed value with the
    /// key file `cask` reads too (`--key-file`, `CASK_KEY_FILE`).
    @Test(arguments: [false, true])
    func pythonReaderAndCaskLsAgree(encrypted: Bool) throws {
        let dir = TemporaryDirectory()
        let keyDir = TemporaryDirectory()
        let keyFile = keyDir.file("key")
        try testKey(9).withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: keyFile))
        let keyArguments = encrypted ? ["--key-file", keyFile] : []
        let keyEnvironment = encrypted ? ["CASK_KEY_FILE": keyFile] : [:]
        var rng = SeededBytes(seed: 12)
        var values: [String: Data] = [:]
        do {
            var o = options(segmentSize: 4096)
            o.compression = .default
            if encrypted { o.encryption = try StoreEncryption(currentKey: testKey(9)) }
            let store = try DiskStore(directory: dir.path, options: o)
            for i in 0..<400 {
                let key = "key/\(i % 90)-ü"
                let value = i % 3 == 0 ? rng.compressible(600 + Int(rng.next() % 900)) : rng.random(Int(rng.next() % 200))
                try store.setValue(value, forKey: key, timeToLive: i % 11 == 0 ? .seconds(3600) : nil, isPinned: i % 13 == 0)
                values[key] = value
                // Pin records (format version 2): some pin or unpin the value just written, some
                // of those values are overwritten later (the pin record is then dead).
                if i % 7 == 2 { try store.setPinned(i % 2 == 0, forKey: key) }
                if i % 9 == 0 { try store.removeValue(forKey: "key/\((i + 5) % 90)-ü"); values["key/\((i + 5) % 90)-ü"] = nil }
            }
            // A removal record (format version 5): "key/1" is key/1-ü and key/10-ü to key/19-ü;
            // one of them is written again after it.
            #expect(try store.removeValues(withPrefix: "key/1") > 0)
            for key in values.keys where key.hasPrefix("key/1") { values[key] = nil }
            try store.setValue(Data("again".utf8), forKey: "key/12-ü")
            values["key/12-ü"] = Data("again".utf8)
            // Cache entries (format version 4): the value starts with an entry header.
            for i in 0..<6 {
                let key = "entry/\(i)", value = i % 2 == 0 ? rng.compressible(900) : rng.random(40)
                try value.withUnsafeBytes { raw in
                    _ = try store.putEntry(raw, forKey: key, freshUntil: 1_800_000_000_000 + Int64(i), expiry: Date().milliseconds + 3_600_000)
                }
                values[key] = value
            }
            // Tagged entries (format version 6): the header lists tags; "red" is removed, one
            // red entry is written again after the removal, and "reddish" is another tag.
            for i in 0..<12 {
                let key = "tagged/\(i)", value = i % 2 == 0 ? rng.compressible(900) : rng.random(40)
                let tags = [["red"], ["blue", "red"], ["reddish"]][i % 3]
                try value.withUnsafeBytes { raw in
                    _ = try store.putEntry(raw, forKey: key, freshUntil: 1_800_000_000_000, expiry: Date().milliseconds + 3_600_000, tags: tags)
                }
                values[key] = tags.contains("red") ? nil : value
            }
            #expect(try store.removeValues(taggedWith: "red") == 8)
            try Data("red again".utf8).withUnsafeBytes { raw in
                _ = try store.putEntry(raw, forKey: "tagged/0", freshUntil: 1_800_000_000_000, expiry: Date().milliseconds + 3_600_000, tags: ["red"])
            }
            values["tagged/0"] = Data("red again".utf8)
            try store.setValue(Data("gone".utf8), forKey: "expired", timeToLive: .milliseconds(1))
            try store.setValue(Data(), forKey: "empty")
            values["empty"] = Data()
            #expect(store.statistics.segmentCount > 5)
            try store.close()
        }
        usleep(5000)
        // One segment without its hint: the reader must scan it.
        let hint = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".hint") }.sorted()[1]
        try FileManager.default.removeItem(atPath: dir.file(hint))

        let (pyStatus, pyOut) = try run("/usr/bin/env", ["python3", repositoryRoot.appendingPathComponent("tools/caskdump.py").path, dir.path, "--json"] + keyArguments)
        #expect(pyStatus == 0)
        let py = try JSONDecoder().decode([Item].self, from: pyOut)
        struct WithCRC: Decodable { var key: String; var crc32c: UInt32 }
        let crcs = try JSONDecoder().decode([WithCRC].self, from: pyOut)

        guard let cask = caskExecutable() else { Issue.record("cask executable not built"); return }
        let (lsStatus, lsOut) = try run(cask, ["ls", dir.path, "--json"], environment: keyEnvironment)
        #expect(lsStatus == 0)
        let ls = try JSONDecoder().decode([Item].self, from: lsOut)

        #expect(py == ls)
        if encrypted {
            // Without the key both readers refuse the store (and neither prints a value).
            let (pyRefused, pyNothing) = try run("/usr/bin/env", ["python3", repositoryRoot.appendingPathComponent("tools/caskdump.py").path, dir.path, "--json"])
            let (lsRefused, lsNothing) = try run(cask, ["ls", dir.path, "--json"])
            #expect(pyRefused != 0 && pyNothing.isEmpty && lsRefused == 3 && lsNothing.isEmpty)
        }
        #expect(Set(py.map(\.key)) == Set(values.keys))
        #expect(py.contains { $0.compressed } && py.contains { !$0.compressed } && py.contains { $0.pinned } && py.contains { $0.expiryTime != nil }
                && py.contains { $0.staleWindow && $0.compressed } && py.contains { $0.staleWindow && !$0.compressed }
                && py.contains { $0.tags == ["reddish"] } && py.contains { $0.tags == ["red"] })
        for item in crcs {
            let value = values[item.key]!
            #expect(value.withUnsafeBytes { CRC32C.checksum($0) } == item.crc32c, "\(item.key)")
        }
    }
}
