package import EventStore
import Foundation

extension Inspect {
    /// What `evstore verify` found.
    package struct Verification: Sendable {
        /// The report.
        package var report: VerificationReport
        /// When another process wrote the store during the check: the head of the consistent
        /// snapshot that was verified instead.
        package var snapshotHead: UInt64?
    }

    /// Verifies a store (see ``EventStore/Store/verify(progress:)``), also while another process
    /// writes it.
    ///
    /// A check that overlaps writes can see the projections a little ahead of the log it
    /// rebuilt from. So when the check finds problems and the store was written meanwhile, a
    /// consistent snapshot is copied (``EventStore/Store/backup(to:)``, one read transaction)
    /// into a temporary directory and verified instead: its verdict is the store's at that point.
    ///
    /// With `other` (another replica of the same data, or a server's store), every event id both
    /// hold must name the same event: an id with other content there is an `id-conflict`
    /// problem (a replica reused ids it had published; see ``diff(_:_:)``).
    package static func verify(
        store: Store, against other: Store? = nil, progress: (@Sendable (Store.Progress) -> Void)? = nil
    ) throws -> Verification {
        var verification = try verifyAlone(store: store, progress: progress)
        if let other {
            for (mine, theirs) in try compareEvents(store, against: other).conflicting {
                verification.report.record(
                    .init(
                        kind: "id-conflict", database: "events", key: "\(mine.id)",
                        detail:
                            "seq \(mine.seq) (digest \(mine.digest)) is another event at seq \(theirs.seq) of \(other.path) "
                            + "(digest \(theirs.digest))"))
            }
        }
        return verification
    }

    private static func verifyAlone(store: Store, progress: (@Sendable (Store.Progress) -> Void)?) throws
        -> Verification
    {
        let before = try store.statistics().lastTransactionID
        let report = try store.verify(progress: progress)
        guard !report.isConsistent, try store.statistics().lastTransactionID != before else {
            return Verification(report: report, snapshotHead: nil)
        }
        let directory = NSTemporaryDirectory() + "evstore-verify-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try store.backup(to: directory)
        var configuration = Store.Configuration()
        configuration.readOnly = true
        configuration.searchChange = .useStored
        configuration.projections = store.configuration.projections
        let snapshot = try Store.open(at: directory, configuration: configuration)
        defer { snapshot.close() }
        return Verification(report: try snapshot.verify(progress: progress), snapshotHead: try snapshot.head())
    }
}
