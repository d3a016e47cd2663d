import EventStore
import EventStoreTestSupport
import Foundation
import Synchronization
import Testing

/// The writer thread: group commit gathers concurrent callers into few commits.
struct WriterTests {
    /// 32 threads append one event at a time, each waiting for its durable commit before the
    /// next: they must share commits. One commit per event would be 640 commits; measured, the
    /// writer gathers about 31 events per commit (27 before it waited for the callers of its
    /// previous commit to come back). The bound, 8 events per commit on average, leaves room
    /// for a loaded machine.
    @Test func thirtyTwoWritersShareCommits() throws {
        var configuration = Store.Configuration()
        configuration.search.defaultFields = []
        try withTemporaryStore(configuration: configuration) { store in
            let writers = 32
            let perWriter = 20
            let first = try store.statistics().lastTransactionID
            let group = DispatchGroup()
            let failures = Mutex(0)
            for writer in 0..<writers {
                group.enter()
                Thread {
                    defer { group.leave() }
                    for index in 0..<perWriter {
                        do {
                            try store.append([
                                .put("notes", id: "w\(writer)-\(index)", fields: ["i": .int(Int64(index))])
                            ])
                        } catch {
                            failures.withLock { $0 += 1 }
                        }
                    }
                }.start()
            }
            group.wait()
            let commits = try store.statistics().lastTransactionID - first
            #expect(failures.withLock { $0 } == 0)
            #expect(try store.head() == UInt64(writers * perWriter))
            #expect(commits <= writers * perWriter / 8, "\(commits) commits for \(writers * perWriter) events")
        }
    }
}
