import Foundation
import GRDB
import LMDB

/// The run's header: date, command, machine, engines' versions, workload and store directory.
extension Report {
    func printHeader() {
        let facts = machineFacts()
        if options.format == .jsonl {
            emit(["type": "run"].merging(facts) { $1 })
            return
        }
        print("EventStore benchmark — \(facts["date"] ?? "")")
        print("command:  \(facts["command"] ?? "")")
        print(
            "machine:  \(facts["cores"] ?? "?") cores (\(facts["cpu"] ?? "?")), \(facts["memory"] ?? "?"), \(facts["os"] ?? "?"), kernel \(facts["kernel"] ?? "?")"
        )
        print(
            "engines:  EventStore (LMDB \(facts["lmdb"] ?? "?")), SQLite \(facts["sqlite"] ?? "?") via GRDB (WAL, FTS5), raw LMDB"
        )
        print(
            "workload: seed \(options.seed); \(Vocabulary.size) words (\(Vocabulary.koreanShare)% Korean), Zipf; 1 collection, N/4 items"
        )
        if options.repeats > 1 { print("runs:     best of \(options.repeats) runs per task") }
        print("store dir: \(workdir) (\(fileSystem(workdir)))")
        print("")
        fflush(nil)
    }

    private func machineFacts() -> [String: String] {
        var facts: [String: String] = [:]
        let formatter = ISO8601DateFormatter()
        facts["date"] = formatter.string(from: Date())
        facts["command"] = (["evstore-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        facts["cores"] = String(ProcessInfo.processInfo.activeProcessorCount)
        facts["memory"] = "\(ProcessInfo.processInfo.physicalMemory >> 30) GiB"
        facts["kernel"] = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
            let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
        {
            facts["os"] = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            facts["cpu"] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        facts["lmdb"] = Environment.libraryVersion
        facts["sqlite"] = try? DatabaseQueue().read { try String.fetchOne($0, sql: "SELECT sqlite_version()") }
        return facts
    }

    private func fileSystem(_ path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "?" }
        var best = ("", "?")
        for line in mounts.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count > 2 else { continue }
            let mount = String(parts[1])
            if (path == mount || path.hasPrefix(mount == "/" ? "/" : mount + "/")) && mount.count > best.0.count {
                best = (mount, String(parts[2]))
            }
        }
        return best.1
    }
}
