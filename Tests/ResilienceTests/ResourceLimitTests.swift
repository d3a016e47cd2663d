import EventStore
import EventStoreTestSupport
import Foundation
import LMDB
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Map growth, reader-table exhaustion and a full disk: clear errors, no damage, recovery.
@Suite("Resource limits", .serialized)
struct ResourceLimitTests {
    /// Whether an error is a clear storage-level error (typed, with a message).
    static func describe(_ error: any Error) -> (code: String, text: String) {
        if let error = error as? EventStoreError { return ("EventStoreError.\(error.code)", "\(error)") }
        if let error = error as? LMDBError { return ("LMDBError", "\(error)") }
        return ("\(type(of: error))", "\(error)")
    }

    @Test("map growth from 1 MiB to 50+ MiB while readers loop")
    func mapGrowthUnderReaders() async throws {
        var configuration = Store.Configuration()
        configuration.mapSize = 1 << 20
        configuration.durability = .relaxed
        try await withTemporaryStore(configuration: configuration) { store in
            let stop = Atomic<Bool>(false)
            let reads = Atomic<Int>(0)
            let problems = Recorder<String>()
            let payload = String(repeating: "p", count: 2_000)
            let readers = (0..<4).map { index in
                Thread.detachNewThreadWithResult {
                    var generator = SeededGenerator(seed: UInt64(index))
                    while !stop.load(ordering: .relaxed) {
                        do {
                            try store.read { reader in
                                let head = try reader.head()
                                if head > 0 {
                                    let seq = UInt64.random(in: 1...head, using: &generator)
                                    guard let event = try reader.event(at: seq) else {
                                        problems.append("seq \(seq) missing below head \(head)")
                                        return
                                    }
                                    if event.seq != seq || event.fields["blob"]?.stringValue?.count != 2_000 {
                                        problems.append("seq \(seq) decoded wrong")
                                    }
                                    _ = try reader.item("bulk", event.item)
                                }
                            }
                            reads.add(1, ordering: .relaxed)
                        } catch {
                            problems.append("read failed: \(error)")
                        }
                    }
                }
            }
            let batches = 250
            for batch in 0..<batches {
                _ = try await store.append((0..<100).map { index in
                    .put("bulk", id: "b\(batch)-\(index)", fields: ["blob": .string(payload), "n": .int(Int64(index))])
                })
            }
            stop.store(true, ordering: .relaxed)
            for reader in readers { reader.wait() }
            let size = try FileManager.default.attributesOfItem(atPath: store.path + "/data.mdb")[.size] as? Int ?? 0
            print("map growth: 1 MiB map grew to a \(size >> 20) MiB file with \(reads.load(ordering: .relaxed)) concurrent reads")
            #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
            #expect(try store.head() == UInt64(batches * 100))
            #expect(try store.count(in: "bulk") == batches * 100)
            #expect(size >= 50 << 20)
            #expect(reads.load(ordering: .relaxed) > 0)
        }
    }

    @Test("more concurrent reads than reader slots: a clear error, then recovery")
    func readersExhausted() async throws {
        var configuration = Store.Configuration()
        configuration.maxReaders = 4
        try await withTemporaryStore(configuration: configuration) { store in
            _ = try await store.append([.put("notes", id: "a", fields: ["title": "alpha"])])
            let errors = Recorder<String>()
            let successes = Atomic<Int>(0)
            let threads = (0..<12).map { _ in
                Thread.detachNewThreadWithResult {
                    do {
                        try store.read { reader in
                            _ = try reader.head()
                            usleep(300_000)
                        }
                        successes.add(1, ordering: .relaxed)
                    } catch {
                        let (code, text) = ResourceLimitTests.describe(error)
                        errors.append("\(code): \(text)")
                    }
                }
            }
            for thread in threads { thread.wait() }
            let failures = errors.values
            print("readers: 12 concurrent reads over 4 slots → \(successes.load(ordering: .relaxed)) succeeded, \(failures.count) refused: \(failures.first ?? "-")")
            #expect(successes.load(ordering: .relaxed) >= 1)
            #expect(successes.load(ordering: .relaxed) + failures.count == 12)
            for failure in failures {
                #expect(failure.lowercased().contains("reader"), "unclear error: \(failure)")
            }
            // Recovery: once the readers are gone every read works again, many times over.
            for _ in 0..<50 { #expect(try store.item("notes", "a") != nil) }
            _ = try await store.append([.put("notes", id: "b", fields: ["title": "beta"])])
            #expect(try store.head() == 2)
            #expect(try store.verify().isConsistent)
        }
    }

    @Test("disk full (4 MiB tmpfs): a clear .storage error, no damage, the store reopens and verifies")
    func diskFull() async throws {
        let directory = TemporaryDirectory(prefix: "diskfull")
        defer { directory.remove() }
        let mountPoint = directory.appending("mnt")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = ResourceLimitTests.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint]) == 0
        defer { if mounted { _ = ResourceLimitTests.run("/bin/umount", ["-l", mountPoint]) } }
        if mounted {
            try await fillDisk(path: mountPoint + "/store")
        } else {
            try await fillFileSizeLimit(directory: directory)
        }
    }

    /// Writes until the tmpfs is full.
    private func fillDisk(path: String) async throws {
        var acknowledged = 0
        var failure: (any Error)?
        do {
            let store = try Store.open(at: path)
            defer { store.close() }
            let payload = String(repeating: "d", count: 1_500)
            for batch in 0..<10_000 {
                do {
                    let events = try await store.append((0..<20).map { index in
                        .put("fill", id: "f\(batch)-\(index)", fields: ["blob": .string(payload)])
                    })
                    acknowledged += events.count
                } catch {
                    failure = error
                    break
                }
            }
            // After the failure the store still reads and answers.
            #expect(try store.head() == UInt64(acknowledged))
        }
        let error = try #require(failure, "4 MiB filled without an error")
        let (code, text) = ResourceLimitTests.describe(error)
        print("disk full after \(acknowledged) events: \(code): \(text)")
        // ENOSPC (from liblmdb often EIO, on a short write) reaches the caller as `.storage`.
        #expect((error as? EventStoreError)?.code == .storage, "expected EventStoreError(.storage), got \(code): \(text)")
        // Reopen on the full disk: every acknowledged event is there and the projections verify.
        try withStore(at: path) { store in
            #expect(try store.head() == UInt64(acknowledged))
            #expect(try store.count(in: "fill") == acknowledged)
            let report = try store.verify()
            #expect(report.isConsistent, "\(report.problems.prefix(3))")
        }
    }

    /// Fallback when mounting is impossible (no privileges): not used when tmpfs mounts.
    private func fillFileSizeLimit(directory: TemporaryDirectory) async throws {
        Issue.record("cannot mount a tmpfs here; run as root (the setrlimit fallback is not implemented)")
    }

    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return -1
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// A thread that can be joined.
final class JoinableThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread.detachNewThread {
            body()
            done.signal()
        }
    }
    func wait() { done.wait() }
}

extension Thread {
    /// Starts `body` on a new thread; `wait()` on the result joins it.
    static func detachNewThreadWithResult(_ body: @escaping @Sendable () -> Void) -> JoinableThread {
        JoinableThread(body)
    }
}
