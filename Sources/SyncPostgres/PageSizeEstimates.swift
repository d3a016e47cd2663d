import EventSyncService
import Synchronization

/// How many bytes of JSON an event of each store took in the pages read lately, so that a page
/// read asks PostgreSQL for about as many events as fit in the page's byte limit rather than
/// for `limit` of them: a page of 200 KB events that holds twenty would otherwise read, and
/// carry through the connection, a thousand bodies.
///
/// A hint only, never a limit on what a page holds: a read that asked for too few events reads
/// on from the last one it got (see ``PostgresSyncStorage/readPage(_:_:logger:)``), so an
/// estimate that is wrong costs a statement, not an event.
final class PageSizeEstimates: Sendable {
    private let averages = Mutex<[String: Int]>([:])
    private let read = Atomic(0)

    /// The most stores remembered; past it the estimates start again (a read without one asks
    /// for ``firstRead`` events first).
    static let maximumStores = 4_096
    /// The events a page read asks for first when no page of its store was read yet.
    static let firstRead = 8

    /// The events read from PostgreSQL, bodies included, by every page read (for tests).
    var eventsRead: Int { read.load(ordering: .relaxed) }

    /// Counts events a page read received.
    func count(read events: Int) {
        read.add(events, ordering: .relaxed)
    }

    /// The bytes of JSON an event of `store` took in the last page read of it that held events.
    func average(for store: String) -> Int? {
        averages.withLock { $0[store] }
    }

    /// Remembers the size of `page`'s events for the next read of `store`.
    func record(_ page: EncodedPage, for store: String) {
        guard let average = page.averageEventBytes else { return }
        averages.withLock { averages in
            if averages.count >= PageSizeEstimates.maximumStores, averages[store] == nil { averages.removeAll() }
            averages[store] = average
        }
    }

    /// How many events to ask for, when a page takes `remainingEvents` more events and
    /// `remainingBytes` more bytes of JSON, and an event takes `average` bytes (`nil`: not known).
    ///
    /// A quarter more than the average says fit, and two more, so that events somewhat larger or
    /// smaller than the average still fill the page in one statement.
    static func rows(remainingEvents: Int, remainingBytes: Int, average: Int?) -> Int {
        guard remainingEvents > 0 else { return 0 }
        guard let average, average > 0 else { return min(remainingEvents, firstRead) }
        let fit = max(0, remainingBytes) / average
        return min(remainingEvents, fit + fit / 4 + 2)
    }
}

extension EncodedPage {
    /// The bytes of JSON an event of the page took (`nil` while it has none).
    var averageEventBytes: Int? {
        count > 0 ? max(1, eventsJSON.count / count) : nil
    }
}
