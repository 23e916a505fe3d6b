import Cask
import CaskHummingbird
import CaskIntegrationTesting
import Foundation
import Hummingbird
import Testing

/// A value stored as one kind and read as the other (issue 41): raw bytes (a `Data`) read as a
/// `Codable` type, or an encoded `Codable` value (a `ByteBuffer` too) read as `Data`, throws
/// `PersistError.invalidConversion`, as with Hummingbird's `MemoryPersistDriver`; the value
/// stays. The bytes chosen would decode as the other kind: `Data("42")` is the JSON of an `Int`.
@Suite struct ValueKindTests {
    /// One value of each kind, under the keys the checks read.
    static func storeBothKinds(in persist: some PersistDriver, expires: Duration?) async throws {
        try await persist.set(key: "raw", value: Data("42".utf8), expires: expires)
        try await persist.set(key: "empty", value: Data(), expires: expires)
        try await persist.set(key: "text", value: "hello", expires: expires)
        try await persist.set(key: "number", value: 42, expires: expires)
        try await persist.set(key: "buffer", value: ByteBuffer(string: "bytes"), expires: expires)
    }

    /// Encoded values read as `Data`, and raw bytes read as `Codable` types, by `get` and
    /// `getWithTTL`: `invalidConversion`.
    static func expectMismatchesRefused(by persist: some PersistDriver) async throws {
        for key in ["text", "number", "buffer"] {
            await #expect(throws: PersistError.invalidConversion, "\(type(of: persist)): \(key) as Data") { try await persist.get(key: key, as: Data.self) }
            await #expect(throws: PersistError.invalidConversion, "\(type(of: persist)): \(key) as Data") { try await persist.getWithTTL(key: key, as: Data.self) }
        }
        for key in ["raw", "empty"] {
            await #expect(throws: PersistError.invalidConversion, "\(type(of: persist)): \(key) as Int") { try await persist.get(key: key, as: Int.self) }
            await #expect(throws: PersistError.invalidConversion, "\(type(of: persist)): \(key) as String") { try await persist.get(key: key, as: String.self) }
            await #expect(throws: PersistError.invalidConversion, "\(type(of: persist)): \(key) as ByteBuffer") { try await persist.get(key: key, as: ByteBuffer.self) }
            await #expect(throws: PersistError.invalidConversion, "\(type(of: persist)): \(key) as Int") { try await persist.getWithTTL(key: key, as: Int.self) }
        }
    }

    /// Every value still reads as its own kind (after the refused reads too).
    static func expectOwnKindsRead(by persist: some PersistDriver) async throws {
        #expect(try await persist.get(key: "raw", as: Data.self) == Data("42".utf8))
        #expect(try await persist.getWithTTL(key: "raw", as: Data.self)?.object == Data("42".utf8))
        #expect(try await persist.get(key: "empty", as: Data.self) == Data())
        #expect(try await persist.get(key: "text", as: String.self) == "hello")
        #expect(try await persist.getWithTTL(key: "number", as: Int.self)?.object == 42)
        #expect(try await persist.get(key: "buffer", as: ByteBuffer.self) == ByteBuffer(string: "bytes"))
    }

    /// The Cask driver refuses the same reads as the memory driver, with and without an expiry.
    @Test(arguments: [nil, Duration.seconds(3_600)])
    func kindsAreKeptAsByTheMemoryDriver(expires: Duration?) async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let cask = try CaskPersistDriver(directory: folder.path)
        for persist in [MemoryPersistDriver() as any PersistDriver, cask] {
            try await Self.storeBothKinds(in: persist, expires: expires)
            try await Self.expectMismatchesRefused(by: persist)
            try await Self.expectOwnKindsRead(by: persist)
        }
        let ttl = try #require(try await cask.getWithTTL(key: "raw", as: Data.self)).ttl
        #expect(expires == nil ? ttl == nil : ttl.map { $0 > .seconds(3_500) } == true)
        try await cask.shutdown()
    }

    /// The kind is kept on disk: a driver opened again on the folder refuses the same reads.
    /// `create` records it as `set` does.
    @Test func theKindSurvivesARestart() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let first = try CaskPersistDriver(directory: folder.path)
        try await Self.storeBothKinds(in: first, expires: nil)
        try await first.create(key: "created", value: "x", expires: nil)
        try await first.shutdown()
        let again = try CaskPersistDriver(directory: folder.path)
        try await Self.expectMismatchesRefused(by: again)
        try await Self.expectOwnKindsRead(by: again)
        await #expect(throws: PersistError.invalidConversion) { try await again.get(key: "created", as: Data.self) }
        try await again.shutdown()
    }

    /// Values an earlier version of the driver wrote (through `CaskCache.setValue`, with no
    /// marker of their kind) read as they did: as their type, and as `Data` their stored bytes.
    @Test func valuesOfAnEarlierDriverReadAsBefore() async throws {
        let folder = TestFolder()
        defer { withExtendedLifetime(folder) {} }   // the folder outlives every store opened in it
        let old = try CaskCache(directory: folder.path)
        try await old.setValue(Data("42".utf8), forKey: "raw")
        try await old.setValue("hello", forKey: "text", timeToLive: .seconds(3_600))
        try await old.setValue(ByteBuffer(string: "bytes"), forKey: "buffer")
        try await old.close()
        let persist = try CaskPersistDriver(directory: folder.path)
        #expect(try await persist.get(key: "raw", as: Data.self) == Data("42".utf8))
        #expect(try await persist.get(key: "raw", as: Int.self) == 42)
        #expect(try await persist.get(key: "text", as: String.self) == "hello")
        #expect(try await persist.get(key: "text", as: Data.self) == Data(#""hello""#.utf8))
        #expect(try #require(try await persist.getWithTTL(key: "text", as: String.self)?.ttl) > .seconds(3_500))
        #expect(try await persist.get(key: "buffer", as: ByteBuffer.self) == ByteBuffer(string: "bytes"))
        await #expect(throws: PersistError.invalidConversion) { try await persist.get(key: "text", as: Int.self) }
        try await persist.shutdown()
    }
}
