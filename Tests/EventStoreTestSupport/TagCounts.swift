public import EventStore

/// A custom projection for tests: the number of items carrying each tag (`tags` field), in its
/// database `counts`.
///
/// ```swift
/// configuration.projections = [TagCounts()]
/// let counts = try TagCounts.stored(store)   // ["work": 2, "home": 1]
/// ```
public struct TagCounts: Projection {
    /// `tag-counts`.
    public let name = "tag-counts"
    /// The version (a change makes the store rebuild its projections).
    public var version: Int
    /// `counts`.
    public let databases = ["counts"]

    /// Creates the projection at `version`.
    public init(version: Int = 1) { self.version = version }

    /// Adds one to each tag the item gained and removes one from each it lost.
    public func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
        let before = Set(change.before?["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let after = Set(change.after?["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        for tag in after.subtracting(before) { try context.add(1, to: tag, in: "counts") }
        for tag in before.subtracting(after) { try context.add(-1, to: tag, in: "counts") }
    }

    /// The counts the projection holds in `store`, by tag.
    public static func stored(_ store: Store) throws -> [String: Int64] {
        let entries = try store.read { try $0.projectionEntries(projection: "tag-counts", database: "counts") }
        return Dictionary(
            uniqueKeysWithValues: entries.map { (String(decoding: $0.key, as: UTF8.self), Counter.decode($0.value)) })
    }
}
