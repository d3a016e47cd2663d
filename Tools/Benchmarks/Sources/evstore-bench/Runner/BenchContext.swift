import Foundation

/// What a child process measures: named figures, plus text notes (checksums).
struct ChildResult: Codable, Sendable {
    var figures: [String: Double] = [:]
    var notes: [String: String] = [:]

    /// The figures of the `reads` scenario: `ids` point reads one by one (`point`) and in one
    /// transaction (`batch`), a scan of `scanned` events, and the items found (each id is read
    /// in both passes).
    static func reads(point: Stopwatch, batch: Stopwatch, ids: Int, scan: Stopwatch, scanned: Int, found: Int)
        -> ChildResult
    {
        ChildResult(figures: [
            "reads.point": point.rate(ids), "reads.batch": batch.rate(ids), "reads.scan": scan.rate(scanned),
            "reads.found": Double(found / 2),
        ])
    }
}

/// The inputs of one child task: the workload and where the stores live.
struct BenchContext: Sendable {
    let options: Options
    let task: ChildTask
    let workload: Workload
    /// The directory of this workload size, shared by the tasks of one run.
    let directory: String

    init(options: Options, task: ChildTask) throws {
        guard let workdir = options.workdir else { throw BenchError("a child needs --workdir") }
        self.options = options
        self.task = task
        self.workload = Workload(events: options.events, seed: options.seed)
        self.directory = BenchContext.directory(workdir: workdir, events: options.events)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    static func directory(workdir: String, events: Int) -> String { "\(workdir)/n\(events)" }

    /// The store written by scenario 1 (`append`) for `engine` with `mode`, reused by the
    /// read-side scenarios (durable stores).
    func store(_ engine: EngineName, _ mode: Mode = .durable, scenario: String = "append") -> String {
        "\(directory)/\(scenario)-\(engine.rawValue)-\(mode.rawValue)" + (engine == .sqlite ? ".sqlite" : "")
    }

    /// Removes a store from an earlier run (SQLite's `-wal` and `-shm` files too).
    func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Fails when the store a read-side scenario needs was not written.
    func requireStore(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw BenchError("\(path) is missing: run the append scenario first (same --workdir and --events)")
        }
    }

    /// Random item ids for point reads (some name deleted or never-written items).
    func readIDs(_ count: Int) -> [String] {
        var random = SeededRandom(seed: workload.seed ^ 0x5245_4144_5349_4453)
        return (0..<count).map { _ in Workload.itemID(random.below(workload.itemCount)) }
    }

    /// The first `writers × perWriter` events, dealt to writers by item, so that each item's
    /// events stay in order within one writer.
    /// Each event comes with its 1-based position in the workload.
    func writerShares(writers: Int, perWriter: Int) -> [[(sequence: Int, event: WorkEvent)]] {
        var generator = workload.makeGenerator()
        var shares = Array(repeating: [(sequence: Int, event: WorkEvent)](), count: writers)
        for (index, event) in generator.next(writers * perWriter).enumerated() {
            shares[event.item % writers].append((index + 1, event))
        }
        return shares
    }
}

/// The size of a file in bytes, or 0 when it does not exist.
func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}

/// Runs `body(writer)` on `writers` threads that start together; returns the wall time in
/// nanoseconds from the start until the last one finished.
func runConcurrently(writers: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws -> UInt64 {
    let ready = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let failure = FailureBox()
    for writer in 0..<writers {
        done.enter()
        let thread = Thread {
            ready.signal()
            start.wait()
            do { try body(writer) } catch { failure.set(error) }
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<writers { ready.wait() }
    let began = monotonicNanoseconds()
    for _ in 0..<writers { start.signal() }
    done.wait()
    let elapsed = monotonicNanoseconds() - began
    if let error = failure.error { throw error }
    return elapsed
}

/// The first error thrown by a concurrent writer.
final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?

    func set(_ error: any Error) {
        lock.lock()
        if stored == nil { stored = error }
        lock.unlock()
    }

    var error: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

extension BenchContext {
    /// The tasks collection of the `queries` and `livequery` scenarios: N tasks.
    var taskWorkload: TaskWorkload {
        TaskWorkload(count: options.events, seed: options.seed, vocabulary: workload.vocabulary)
    }
}
