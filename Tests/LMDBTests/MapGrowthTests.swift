import Foundation
import LMDB
import Synchronization
import Testing

/// A flag that one task sets and others poll.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

/// A full map is grown and the write retried; without growth, `mapFull` is reported and the
/// environment stays usable.
struct MapGrowthTests {
    static let value = [UInt8](repeating: 0x5A, count: 2_000)

    @Test func aTinyMapGrowsWhileWritesRetry() throws {
        try withEnvironment({
            $0.mapSize = 64 << 10
            $0.durability = .bulk
        }) { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "blobs", options: .create) }
            var attempts = 0
            // One transaction larger than the initial map: it must run again after growing.
            try environment.write { tx throws in
                attempts += 1
                for index in 0..<1_000 as Range<UInt64> { try tx.put(MapGrowthTests.value, forKey: key(index), in: db) }
            }
            #expect(attempts >= 2, "the write closure ran again after the map grew")
            for batch in 1..<40 as Range<UInt64> {
                try environment.write { tx throws in
                    for index in 0..<250 as Range<UInt64> {
                        try tx.put(MapGrowthTests.value, forKey: key(batch * 1_000 + index), in: db)
                    }
                }
            }
            try environment.sync()
            let info = environment.info()
            #expect(info.mapSize > 20 << 20)
            #expect(info.usedBytes > 20 << 20)
            try environment.read { tx throws in
                #expect(try tx.count(of: db) == 1_000 + 39 * 250)
                #expect(try tx.value(forKey: key(39_249), in: db) == MapGrowthTests.value)
                #expect(try tx.value(forKey: key(999), in: db) == MapGrowthTests.value)
            }
        }
    }

    @Test func withoutGrowthAFullMapIsReportedAndNothingIsWritten() throws {
        try withEnvironment({
            $0.mapSize = 256 << 10
            $0.growsAutomatically = false
        }) { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "blobs", options: .create) }
            _ = try environment.write { try $0.put(bytes("small"), forKey: bytes("first"), in: db) }
            var caught: LMDBError?
            do {
                try environment.write { tx throws in
                    for index in 0..<1_000 as Range<UInt64> {
                        try tx.put(MapGrowthTests.value, forKey: key(index), in: db)
                    }
                }
            } catch LMDBError.mapFull {
                caught = .mapFull
            }
            #expect(caught == .mapFull)
            #expect(environment.info().mapSize == 256 << 10)
            try environment.read { tx throws in
                #expect(try tx.count(of: db) == 1, "the failed transaction wrote nothing")
                #expect(try tx.value(forKey: bytes("first"), in: db) == bytes("small"))
            }
            // Smaller writes still fit.
            _ = try environment.write { try $0.put(bytes("after"), forKey: bytes("second"), in: db) }
            #expect(try environment.read { try $0.count(of: db) } == 2)
        }
    }

    @Test func growthStopsAtTheMaximumMapSize() throws {
        try withEnvironment({
            $0.mapSize = 128 << 10
            $0.maximumMapSize = 1 << 20
        }) { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "blobs", options: .create) }
            #expect(throws: LMDBError.mapFull) {
                try environment.write { tx throws in
                    for index in 0..<2_000 as Range<UInt64> {
                        try tx.put(MapGrowthTests.value, forKey: key(index), in: db)
                    }
                }
            }
            #expect(environment.info().mapSize == 1 << 20)
            #expect(try environment.read { try $0.count(of: db) } == 0)
        }
    }

    @Test func aWrappedMapFullErrorStillGrowsTheMap() throws {
        struct Wrapped: Error { var cause: any Error }
        try withEnvironment({ $0.mapSize = 64 << 10 }) { environment, _ in
            let db = try environment.write { try $0.openDatabase(named: "blobs", options: .create) }
            try environment.write { tx throws in
                do {
                    for index in 0..<500 as Range<UInt64> {
                        try tx.put(MapGrowthTests.value, forKey: key(index), in: db)
                    }
                } catch {
                    throw Wrapped(cause: error)  // a caller's own error type must not hide the full map
                }
            }
            #expect(try environment.read { try $0.count(of: db) } == 500)
        }
    }

    @Test func readersRunWhileTheMapGrows() async throws {
        let directory = TestDirectory()
        defer { directory.remove() }
        var configuration = Environment.Configuration()
        configuration.mapSize = 64 << 10
        configuration.durability = .bulk
        let environment = try Environment.open(path: directory.path, configuration: configuration)
        let db = try environment.write { try $0.openDatabase(named: "blobs", options: .create) }
        let done = Flag()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var reads = 0
                    var last = 0
                    while !done.isSet {
                        let count = try environment.read { try $0.count(of: db) }
                        #expect(count >= last, "a later snapshot never has fewer entries")
                        last = count
                        reads += 1
                        try await Task.sleep(for: .microseconds(100))
                    }
                    return reads
                }
            }
            group.addTask {
                for batch in 0..<60 as Range<UInt64> {
                    try environment.write { tx throws in
                        for index in 0..<100 as Range<UInt64> {
                            try tx.put(MapGrowthTests.value, forKey: key(batch * 100 + index), in: db)
                        }
                    }
                }
                done.set()
                return 0
            }
            var total = 0
            for try await reads in group { total += reads }
            #expect(total > 0)
        }
        #expect(try environment.read { try $0.count(of: db) } == 6_000)
        #expect(environment.info().mapSize > 64 << 10)
    }
}
