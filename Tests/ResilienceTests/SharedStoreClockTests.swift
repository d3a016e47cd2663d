import EventStore
import EventStoreTestSupport
import Foundation
import Testing

/// Two processes write one store: when one gives the events stamped while the device's clock ran
/// ahead new stamps and sets the store's clock back, the other follows it instead of stamping
/// ahead again from what it held in memory.
@Suite("A store's clock set back by another process")
struct SharedStoreClockTests {
    @Test("a process whose clock ran ahead stamps below the bound once another process set the store's clock back")
    func anotherProcessSetsTheClockBack() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("store")
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let clock = ManualClock(start: now + 86_400_000)
        var configuration = Store.Configuration()
        configuration.physicalClock = clock.function
        // As evstore-crash opens it.
        configuration.indexes = [
            IndexDefinition("crash", fields: ["title"]), IndexDefinition("notes", fields: ["title"]),
        ]
        let store = try Store.open(at: path, configuration: configuration)
        defer { store.close() }
        let ahead = try await store.put("notes", id: "n1", fields: ["title": "a day ahead"])
        let bound = now + 60_000

        let child = try ChildProcess(["restamp", path, "\(ahead.id)", "\(bound)"])
        #expect(await child.wait(timeout: .seconds(120)) == 0, "\(child.errorText)")
        clock.set(now)  // this device's clock is right again
        // A first write that appends nothing (a sync cursor, application metadata) follows the
        // new id, and the clock with it.
        try await store.write { try $0.setMetadata([1], forKey: "app.seen") }
        let next = try await store.put("notes", id: "n2", fields: ["title": "after"])
        #expect(next.hlc.physical <= bound, "stamped \(next.hlc), bound \(bound)")
        #expect(child.lines.last == "restamped \(store.replicaID)", "this process follows the new replica id")
        #expect(next.id.origin == store.replicaID)
        let moved = try store.read { try $0.event(at: ahead.seq)! }
        #expect(moved.hlc < next.hlc && moved.hlc.physical <= bound)
        #expect(try store.verify().isConsistent)
    }
}
