import Foundation

/// A folder of its own for one test, under the temporary directory, removed when released.
/// Keep it alive past every store opened in it (`defer { withExtendedLifetime(folder) {} }`).
public final class TestFolder: Sendable {
    public let path: String

    public init(_ label: String = #function) {
        path = NSTemporaryDirectory() + "cask-integration-tests/\(label.filter { $0.isLetter })-\(UUID().uuidString)"
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
