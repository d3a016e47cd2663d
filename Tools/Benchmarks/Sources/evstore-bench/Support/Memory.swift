import Foundation
import Synchronization

/// Memory figures of this process, from `/proc/self/status` (Linux).
///
/// Every scenario runs in its own child process, so the process's high-water mark (`VmHWM`) is
/// the scenario's peak resident set. It counts file-backed pages too: LMDB reads through a
/// memory map, so the pages of the store that a scenario touched count, while SQLite's reads go
/// through the kernel's page cache, which does not. A sampler therefore also tracks the peak of
/// anonymous memory (resident minus shared pages in `/proc/self/statm`: heap and stacks) every
/// 10 ms. Set `EVSTORE_BENCH_SAMPLER=0` to turn it off (under valgrind, say).
final class MemorySampler: Sendable {
    private let peakAnonymous = Mutex<Int>(0)
    private let running = Mutex<Bool>(true)

    init() {
        guard ProcessInfo.processInfo.environment["EVSTORE_BENCH_SAMPLER"] != "0" else { return }
        let thread = Thread { [self] in
            let descriptor = open("/proc/self/statm", O_RDONLY)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            let pageKiB = Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
            var buffer = [UInt8](repeating: 0, count: 128)
            while running.withLock({ $0 }) {
                let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    // size resident shared text lib data dt, in pages
                    let fields = buffer[..<count].split(separator: 0x20).prefix(3).map {
                        Int(String(decoding: $0, as: UTF8.self)) ?? 0
                    }
                    if fields.count == 3 { peakAnonymous.withLock { $0 = max($0, (fields[1] - fields[2]) * pageKiB) } }
                }
                usleep(10_000)
            }
        }
        thread.name = "rss-sampler"
        thread.start()
    }

    /// Stops sampling; returns (peak RSS, peak anonymous RSS) in MiB.
    func finish() -> (peak: Double, anonymous: Double) {
        running.withLock { $0 = false }
        return current()
    }

    /// The peaks so far (peak RSS, peak anonymous RSS) in MiB; sampling goes on.
    func current() -> (peak: Double, anonymous: Double) {
        let anon = max(peakAnonymous.withLock { $0 }, MemorySampler.statusKiB("RssAnon") ?? 0)
        let peak = MemorySampler.statusKiB("VmHWM") ?? 0
        return (Double(peak) / 1024, Double(anon) / 1024)
    }

    /// A `kB` line of `/proc/self/status`, such as `VmHWM`.
    static func statusKiB(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
            return Int(digits)
        }
        return nil
    }
}
