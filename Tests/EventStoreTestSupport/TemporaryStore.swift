public import EventStore
import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Creates a new, empty directory.
    public init(prefix: String = "eventstore-test") {
        path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func appending(_ component: String) -> String { path + "/" + component }

    /// Deletes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs `body` with a store in its own temporary directory, then closes and deletes it.
///
/// ```swift
/// @Test func roundTrip() async throws {
///     try await withTemporaryStore { store in
///         try await store.put("notes", id: "n1", fields: ["title": "x"])
///     }
/// }
/// ```
public func withTemporaryStore<T>(
    configuration: Store.Configuration = Store.Configuration(),
    _ body: (Store) async throws -> T
) async throws -> T {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let store = try Store.open(at: directory.path, configuration: configuration)
    defer { store.close() }
    return try await body(store)
}

/// The synchronous variant of ``withTemporaryStore(configuration:_:)-(_,(Store)async throws->T)``.
public func withTemporaryStore<T>(
    configuration: Store.Configuration = Store.Configuration(),
    _ body: (Store) throws -> T
) throws -> T {
    let directory = TemporaryDirectory()
    defer { directory.remove() }
    let store = try Store.open(at: directory.path, configuration: configuration)
    defer { store.close() }
    return try body(store)
}

/// A test clock: milliseconds that only move when told to (and may move backwards).
public final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: UInt64

    /// Creates a clock at `start` milliseconds since 1970.
    public init(start: UInt64 = 1_800_000_000_000) { milliseconds = start }

    /// The current time.
    public var now: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return milliseconds
    }

    /// Sets the time (backwards too).
    public func set(_ value: UInt64) {
        lock.lock()
        milliseconds = value
        lock.unlock()
    }

    /// Moves the time by `delta` milliseconds (negative: backwards).
    public func advance(by delta: Int64) {
        lock.lock()
        milliseconds = UInt64(Int64(milliseconds) + delta)
        lock.unlock()
    }

    /// The clock as a store's physical clock.
    public var function: @Sendable () -> UInt64 { { [self] in now } }
}

/// A seeded random number generator (SplitMix64): the same seed gives the same sequence.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
