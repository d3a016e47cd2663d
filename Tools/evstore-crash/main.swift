// evstore-crash: a workload made to be killed. The reliability tests start it, kill it with
// SIGKILL at a random moment, reopen the store and check what survived.
//
//   evstore-crash append STORE SEED       appends small durable batches forever; prints
//                                          `ack <seq> <originSeq> <random>` per event once its commit returned
//   evstore-crash rebuild STORE [HELD]    rebuilds the projections forever; prints `rebuilt <n>`
//                                          (HELD: the item records a rebuild holds in memory, so
//                                          that a small number makes it replay in passes)
//   evstore-crash restamp STORE ID BOUND  gives the store's own events from event id ID on new
//                                          stamps at or below BOUND (milliseconds since 1970), once,
//                                          as a second process would; prints `restamped <replica>`
//   evstore-crash pull STORE URL TOKEN [STORENAME]
//                                          pulls from a sync server page by page; prints
//                                          `pulled <localHead>` after each sync and `done` at the end
//
// Every store it opens declares indexes on the items' titles, kept as sorted runs that small
// commits merge often. Every line is written with one write(2) call, so nothing sits in a buffer
// when the process dies.
// The endless workloads stop by themselves when the process that started them is gone.

import EventStore
import EventSync
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes one line to standard output, unbuffered.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written <= 0 { exit(3) }
        offset += written
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("evstore-crash: " + message + "\n").utf8))
    exit(2)
}

/// The test process that started this one. When it is gone (a test runner killed mid-test),
/// the workloads stop instead of running forever: they check ``orphaned`` on every round.
let parent = getppid()
var orphaned: Bool { getppid() != parent }

/// The indexes every workload maintains (the append workload writes `crash`, the rebuild test's
/// store holds `notes`), so that a kill can land in their runs and merges too.
let titleIndexes = [IndexDefinition("crash", fields: ["title"]), IndexDefinition("notes", fields: ["title"])]

/// Opens the store at `path` (declaring ``titleIndexes``; holding at most `heldRecords` item
/// records in a rebuild) and says `ready <replica> <head>`, or fails.
func openStore(_ path: String, heldRecords: Int? = nil) -> Store {
    do {
        var configuration = Store.Configuration()
        configuration.indexes = titleIndexes
        if let heldRecords { configuration.replayRecordLimit = heldRecords }
        let store = try Store.open(at: path, configuration: configuration)
        say("ready \(store.replicaID) \(try store.head())")
        return store
    } catch {
        fail("cannot open \(path): \(error)")
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    fail(
        "usage: evstore-crash append STORE SEED | rebuild STORE [HELD] | restamp STORE ID BOUND | pull STORE URL TOKEN "
            + "[STORENAME]")
}

switch arguments[1] {
case "append":
    guard arguments.count == 4, let seed = UInt64(arguments[3]) else { fail("usage: evstore-crash append STORE SEED") }
    let store = openStore(arguments[2])
    var generator = CrashWorkload.Generator(seed: seed)
    while !orphaned {
        let count = Int(generator.next() % 5) + 1
        let randoms = (0..<count).map { _ in generator.next() }
        do {
            let events = try store.append(randoms.map(CrashWorkload.change(random:)))
            for (event, random) in zip(events, randoms) {
                say("ack \(event.seq) \(event.id.sequence) \(String(random, radix: 16))")
            }
        } catch {
            fail("append failed: \(error)")
        }
    }
    exit(0)

case "rebuild":
    let held = arguments.count > 3 ? Int(arguments[3]) : nil
    guard arguments.count == 3 || held.map({ $0 > 0 }) == true else {
        fail("usage: evstore-crash rebuild STORE [HELD]")
    }
    let store = openStore(arguments[2], heldRecords: held)
    var round = 0
    while !orphaned {
        do {
            try store.rebuildProjections()
        } catch {
            fail("rebuild failed: \(error)")
        }
        round += 1
        say("rebuilt \(round)")
    }
    exit(0)

case "restamp":
    guard arguments.count == 5, let id = EventID(arguments[3]), let bound = UInt64(arguments[4]) else {
        fail("usage: evstore-crash restamp STORE ID BOUND")
    }
    let store = openStore(arguments[2])
    do {
        let change = try await store.restamp(from: id, notAfter: HLCTimestamp(physical: bound, logical: .max))
        say("restamped \(change.current)")
    } catch {
        fail("restamp failed: \(error)")
    }
    exit(0)

case "pull":
    guard arguments.count >= 5 else { fail("usage: evstore-crash pull STORE URL TOKEN [STORENAME]") }
    let store = openStore(arguments[2])
    var configuration = Synchronizer.Configuration()
    configuration.pullPageSize = 25
    let synchronizer = Synchronizer(
        store: store,
        transport: HTTPTransport(
            baseURL: arguments[3], token: arguments[4], storeName: arguments.count > 5 ? arguments[5] : "notes"),
        remoteName: "server", configuration: configuration)
    do {
        let report = try await synchronizer.sync()
        say("pulled \(try store.head()) \(report.pulled)")
        say("done")
    } catch {
        fail("sync failed: \(error)")
    }
    exit(0)

default:
    fail("unknown mode \(arguments[1])")
}

/// The deterministic content of the append workload: what the tests expect to find.
enum CrashWorkload {
    /// SplitMix64.
    struct Generator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let words = ["alpha", "beta", "gamma", "delta", "동기화", "메모", "sync", "crash", "ledger", "kiwi"]

    /// A put of one of 64 items, whose fields carry `random` so the content can be checked.
    static func change(random: UInt64) -> Change {
        let item = "i\(random % 64)"
        let title = "\(words[Int(random >> 8) % words.count]) \(words[Int(random >> 16) % words.count])"
        if random % 17 == 0 { return .delete("crash", id: item) }
        return .put("crash", id: item, fields: ["title": .string(title), "r": .string(String(random, radix: 16))])
    }
}
