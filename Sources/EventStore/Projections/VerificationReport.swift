/// The result of ``Store/verify(progress:)``: log invariants and projections compared with a
/// rebuild from the log.
public struct VerificationReport: Sendable, Hashable {
    /// One difference or broken invariant.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// What kind of problem: `log-gap`, `undecodable-event`, `event-id-mismatch`,
        /// `origin-sequence-behind` (the log holds events of the current replica id past the
        /// sequence the store would write next: it would reuse ids), `rebuild-pending` (a
        /// restamp's rebuild has not run), `id-conflict` (an id names other content in another
        /// replica; `evstore verify --against`), `missing` (the rebuild has an entry the live
        /// projection lacks), `unexpected` (the live projection has an entry the rebuild lacks),
        /// or `different` (both have it, bytes differ).
        public var kind: String
        /// The database concerned (`events`, `items`, `search_segments`, …).
        public var database: String
        /// The entry's key, readable: `collection/item` for item keys, else hex.
        public var key: String
        /// What is wrong.
        public var detail: String

        /// `kind database key: detail`.
        public var description: String { "\(kind) \(database) \(key): \(detail)" }

        /// Creates a problem.
        public init(kind: String, database: String, key: String, detail: String) {
            self.kind = kind
            self.database = database
            self.key = key
            self.detail = detail
        }
    }

    /// Events read from the log.
    public var eventsChecked: UInt64 = 0
    /// Projection entries compared.
    public var entriesCompared: UInt64 = 0
    /// Every problem found (at most ``maxProblems``; see ``truncated``).
    public var problems: [Problem] = []
    /// Whether more problems existed than were recorded.
    public var truncated = false
    /// Custom projections the store records but this process does not register, so their data
    /// was not compared (``StoreReader/unregisteredProjections()``). They do not make the report
    /// inconsistent; verify them from the application that registers them.
    public var skippedProjections: [ProjectionRecord] = []

    /// The most problems recorded.
    public static let maxProblems = 1_000

    /// Whether the log is sound and the projections equal a rebuild byte for byte.
    public var isConsistent: Bool { problems.isEmpty }

    /// Adds a problem (past ``maxProblems`` only ``truncated`` is set).
    public mutating func record(_ problem: Problem) {
        if problems.count < VerificationReport.maxProblems { problems.append(problem) } else { truncated = true }
    }
}
