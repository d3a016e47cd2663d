/// An error from the event store: a code to match on, a message for people, and the cause.
///
/// ```swift
/// do {
///     try await store.append([.put("", id: "x", fields: [:])])
/// } catch let error as EventStoreError where error.code == .invalidName {
///     print(error.message)   // collection name is empty
/// }
/// ```
public struct EventStoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of error this is. Extensible: match on the static values.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name, such as `invalid-name`.
        public let name: String

        init(_ name: String) { self.name = name }

        /// The code's name.
        public var description: String { name }

        /// A collection, item or field name is empty, too long, or holds a forbidden character.
        public static let invalidName = Code("invalid-name")
        /// An event or change is malformed (a patch without fields, a delete with fields, a
        /// non-finite number, an unknown operation…).
        public static let invalidEvent = Code("invalid-event")
        /// An encoded event is larger than the configured limit.
        public static let eventTooLarge = Code("event-too-large")
        /// A batch holds more events or bytes than the configured limits.
        public static let batchTooLarge = Code("batch-too-large")
        /// A received stamp is further ahead of this replica's clock than the skew bound.
        public static let clockSkew = Code("clock-skew")
        /// The path exists but is not a directory.
        public static let notADirectory = Code("not-a-directory")
        /// The directory holds a file that is not an event store, or a damaged one.
        public static let notAStore = Code("not-a-store")
        /// The store's directory or files may not be read (or, for a writable store, written)
        /// by this process.
        public static let permissionDenied = Code("permission-denied")
        /// The store was written by a newer format version than this library understands.
        public static let unsupportedFormat = Code("unsupported-format")
        /// Stored bytes could not be decoded.
        public static let corrupt = Code("corrupt")
        /// The store is closed.
        public static let closed = Code("closed")
        /// The store was opened read-only and a write was attempted.
        public static let readOnly = Code("read-only")
        /// A typed model could not be encoded to or decoded from fields.
        public static let typeMismatch = Code("type-mismatch")
        /// An operation on the storage engine failed (an I/O error, too many readers, …).
        public static let storage = Code("storage")
        /// The disk holding the store is full. The operation changed nothing (a store being
        /// created is left to be created afresh); free some space and retry.
        public static let diskFull = Code("disk-full")
        /// A projection is misconfigured or failed.
        public static let projection = Code("projection")
        /// The store records another search configuration than the one it is opened with (see
        /// ``Store/SearchChange``): declare the change with ``Store/SearchChange/reindex``, open
        /// with the store's own (``Store/SearchChange/useStored``), or restore the previous one.
        public static let configurationMismatch = Code("configuration-mismatch")
        /// The item or event does not exist.
        public static let notFound = Code("not-found")
        /// A received event carries an id the log already holds for an event with other content
        /// (the cause is an ``EventIDConflict``). An event id names exactly one event.
        public static let eventConflict = Code("event-conflict")
        /// A query is malformed: an invalid field, limit or filter, or a cursor that is damaged or
        /// belongs to another query (see ``QueryPage/next``).
        public static let invalidQuery = Code("invalid-query")
        /// No declared index can serve a query, and the query does not allow a scan
        /// (``Query/allowsScan``). The message names the index to declare.
        public static let indexRequired = Code("index-required")
    }

    /// What kind of error this is.
    public let code: Code
    /// What went wrong, for people.
    public let message: String
    /// The underlying error, if any.
    public let cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// `code: message` and the cause.
    public var description: String {
        var text = "\(code): \(message)"
        if let cause { text += " (\(cause))" }
        return text
    }
}
