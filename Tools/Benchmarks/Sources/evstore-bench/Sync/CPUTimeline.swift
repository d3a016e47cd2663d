import Foundation
import Synchronization

/// The CPU time of this process (the sync servers) and of the PostgreSQL server, sampled every
/// 50 ms while the client runs in another process, so that the CPU they spent during one of the
/// client's phases (timed there on the system-wide monotonic clock) can be read afterwards.
final class CPUTimeline: Sendable {
    private struct Sample {
        var time: UInt64
        var process: Double
        var database: Double?
    }

    private let samples = Mutex<[Sample]>([])
    private let running = Atomic(true)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling; `database` reads the PostgreSQL server's CPU time (`nil`: no database).
    init(database: PostgresProbe?) {
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                let sample = Sample(
                    time: monotonicNanoseconds(), process: ProcessStats.cpuSeconds(), database: database?.cpuSeconds())
                samples.withLock { $0.append(sample) }
                Thread.sleep(forTimeInterval: 0.05)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling (call it once).
    func stop() {
        running.store(false, ordering: .relaxed)
        finished.wait()
    }

    /// The CPU seconds spent between the monotonic times `start` and `end` (nanoseconds),
    /// interpolated between the samples around them.
    func cpu(from start: UInt64, to end: UInt64) -> (process: Double, database: Double?) {
        samples.withLock { samples in
            func at(_ time: UInt64, _ value: (Sample) -> Double?) -> Double? {
                guard let after = samples.firstIndex(where: { $0.time >= time }) else {
                    return samples.last.flatMap(value)
                }
                guard after > 0, let high = value(samples[after]), let low = value(samples[after - 1]) else {
                    return value(samples[after])
                }
                let (from, to) = (samples[after - 1].time, samples[after].time)
                return low + (high - low) * Double(time - from) / Double(max(1, to - from))
            }
            let process = (at(end, { $0.process }) ?? 0) - (at(start, { $0.process }) ?? 0)
            let database = at(end, { $0.database }).flatMap { high in at(start, { $0.database }).map { high - $0 } }
            return (process, database)
        }
    }
}
