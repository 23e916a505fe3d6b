import Foundation

/// Turns values into bytes for the disk layer and back. Implementations must be thread-safe.
public protocol CacheCoder: Sendable {
    /// The bytes of `value`.
    func encode<T: Encodable>(_ value: T) throws -> Data
    /// A value decoded from `data`; throws when the bytes are not a `T`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

/// JSON (the default): readable on disk, portable.
public struct JSONCacheCoder: CacheCoder {
    public init() {}
    public func encode<T: Encodable>(_ value: T) throws -> Data { try JSONEncoder().encode(value) }
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T { try JSONDecoder().decode(type, from: data) }
}

/// Binary property lists: more compact than JSON for numbers and `Data` fields.
public struct BinaryCacheCoder: CacheCoder {
    public init() {}
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode([value])   // wrapped: top-level scalars are not valid plists
    }
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let values = try PropertyListDecoder().decode([T].self, from: data)
        guard let first = values.first else { throw CaskError.coding(key: "", reason: "empty property list") }
        return first
    }
}
