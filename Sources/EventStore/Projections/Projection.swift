/// A projection an application registers to derive its own data from the log.
///
/// The store calls ``apply(_:in:)`` for every event, inside the write transaction that appends
/// it, after the items projection has merged it; a checkpoint advances in the same commit. When
/// ``version`` changes, the store rebuilds the projection from the log at open.
///
/// ```swift
/// struct NotesPerTag: Projection {
///     let name = "notes-per-tag"
///     let version = 1
///     let databases = ["counts"]
///
///     func apply(_ change: ProjectionChange, in context: ProjectionContext) throws {
///         let before = Set(change.before?["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
///         let after = Set(change.after?["tags"]?.arrayValue?.compactMap(\.stringValue) ?? [])
///         for tag in after.subtracting(before) { try context.add(1, to: tag, in: "counts") }
///         for tag in before.subtracting(after) { try context.add(-1, to: tag, in: "counts") }
///     }
/// }
/// var configuration = Store.Configuration()
/// configuration.projections = [NotesPerTag()]
/// ```
///
/// `apply` must be deterministic (a pure function of the change and the projection's own data):
/// rebuilds and ``Store/verify(progress:)`` compare its databases byte for byte.
public protocol Projection: Sendable {
    /// A unique name: letters, digits, `-`, `_` and `.`, at most 64 bytes.
    var name: String { get }
    /// The version of the projection's logic and data layout; a change triggers a rebuild.
    var version: Int { get }
    /// The names of the projection's own key-value databases.
    var databases: [String] { get }
    /// Applies one event.
    ///
    /// - Parameters:
    ///   - change: The event and the item before and after it.
    ///   - context: Access to the projection's databases, valid only during the call.
    func apply(_ change: ProjectionChange, in context: ProjectionContext) throws
}

/// One event as a projection sees it: the event and its item before and after.
public struct ProjectionChange: Sendable {
    /// The event, with its seq in this store's log.
    public var event: Event
    /// The item before the event (`nil` when it did not exist).
    public var before: Item?
    /// The item after the event (`nil` when it does not exist, such as after a delete).
    public var after: Item?
}
