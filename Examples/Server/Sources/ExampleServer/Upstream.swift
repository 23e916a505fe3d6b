import Foundation
import Synchronization

/// A user as the upstream service returns it.
public struct User: Codable, Sendable, Equatable {
    public var id: Int
    public var name: String
}

/// A slow upstream service (another team's API, a database): every call takes `delay`, and
/// fails while `isFailing` is set. Counts its calls.
public final class SlowUpstream: Sendable {
    public let delay: Duration
    private let failing = Atomic<Bool>(false)
    private let calls = Atomic<Int>(0)

    public init(delay: Duration = .milliseconds(200)) { self.delay = delay }

    /// Whether calls fail (an outage).
    public var isFailing: Bool {
        get { failing.load(ordering: .relaxed) }
        set { failing.store(newValue, ordering: .relaxed) }
    }

    /// How many calls were made.
    public var callCount: Int { calls.load(ordering: .relaxed) }

    public struct Outage: Error {}

    /// The user `id`, after `delay`; throws ``Outage`` while failing.
    public func user(_ id: Int) async throws -> User {
        calls.add(1, ordering: .relaxed)
        try await Task.sleep(for: delay)
        if isFailing { throw Outage() }
        return User(id: id, name: "user \(id)")
    }
}
