import Foundation

/// CPU time and bytes written by this process, from `getrusage` and `/proc/self/io` (Linux).
enum ProcessStats {
    /// User and system CPU time of the whole process so far, in seconds.
    static func cpuTimes() -> (user: Double, system: Double) {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    /// User plus system CPU time of the whole process so far, in seconds.
    static func cpuSeconds() -> Double {
        let times = cpuTimes()
        return times.user + times.system
    }

    /// Bytes handed to `write(2)`/`pwrite(2)` by the process so far (`wchar`), or `nil` when
    /// `/proc/self/io` cannot be read.
    static func writtenBytes() -> Double? {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        for line in io.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The machine's load average over the last minute (`/proc/loadavg`), or `nil`.
    static func loadAverage() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        return text.split(separator: " ").first.flatMap { Double($0) }
    }
}
