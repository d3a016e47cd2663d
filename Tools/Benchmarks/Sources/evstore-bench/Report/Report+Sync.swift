import Foundation

extension Report.Aim {
    /// The first sync of 1M events in ≤ 20 s (issue 11), as a rate, so that the aim reads the same
    /// at any size (`--short` syncs 20,000 events).
    static let firstSync = Report.Aim.atLeast(50_000, text: "50,000 (1M in 20 s)")
    /// The first sync's client anonymous memory ≤ 150 MiB (issue 11).
    static let firstSyncMemory = Report.Aim.figureAtMost("first.rss.anon", 150, text: "150 MiB anonymous")
    /// A change pushed by one replica is in another replica's store within 250 ms p99 (issue 13).
    static let livePull = Report.Aim.atMost(250, text: "250 ms")

    /// This aim with the figures it names itself (``figureAtMost``) under `prefix`.
    func prefixed(_ prefix: String) -> Report.Aim {
        switch self {
        case .figureAtMost(let figure, let goal, let text): .figureAtMost(prefix + figure, goal, text: text)
        case .both(let first, let second): .both(first.prefixed(prefix), second.prefixed(prefix))
        default: self
        }
    }
}

extension Report {
    /// The rows of scenario 10, one column per backend; each key is under `sync.<backend>.`.
    var syncRows: [Row] {
        let load = options
        return [
            Row("  seed: the LMDB store, bulk, 10,000 events/txn (events/s)", "seed", .rate),
            Row("  seed: pushes of 1,000 events, in process, durable (events/s)", "seed.pushed", .rate),
            Row("  server store after seeding (MiB; PostgreSQL: database growth)", "server.size", .mebibytes),
            Row("  first sync, server → new client: seconds", "first.seconds", .seconds),
            Row("  first sync: events/s", "first.rate", .rate, aim: .firstSync),
            Row("  first sync: client peak RSS, own process (MiB)", "first.rss", .memory, aim: .firstSyncMemory),
            Row("  first sync: client CPU time, user (s)", "first.cpu.user", .seconds),
            Row("  first sync: client CPU time, system (s)", "first.cpu.system", .seconds),
            Row("  first sync: server process CPU time (s)", "first.server.cpu", .seconds),
            Row("  first sync: PostgreSQL server CPU time (s)", "first.database.cpu", .seconds),
            Row("  first sync: client bytes written per event (KiB)", "first.written", .kibibytes),
            Row("  first sync: requests (pulled pages)", "first.requests", .count),
            Row("  client store after the first sync (MiB)", "client.size", .mebibytes),
            Row(
                "  incremental sync pulling \(load.syncRoundEvents) events: p50 (ms)", "incremental.p50", .milliseconds),
            Row(
                "  incremental sync pulling \(load.syncRoundEvents) events: p99 (ms)", "incremental.p99", .milliseconds),
            Row("  live pull: another replica's push → in this store, p50 (ms)", "live.p50", .milliseconds),
            Row(
                "  live pull: another replica's push → in this store, p99 (ms)", "live.p99", .milliseconds,
                aim: .livePull),
            Row(
                "  \(load.pushClients) clients, \(load.pushEvents) events per push, one store: pushes/s", "push.1.rate",
                .rate),
            Row("  … one store: push round trip, p50 (ms)", "push.1.p50", .milliseconds),
            Row("  … one store: push round trip, p99 (ms)", "push.1.p99", .milliseconds),
            Row("  … a store per client: pushes/s", "push.1.stores.rate", .rate),
            Row("  … a store per client: push round trip, p50 (ms)", "push.1.stores.p50", .milliseconds),
            Row("  … a store per client: push round trip, p99 (ms)", "push.1.stores.p99", .milliseconds),
            Row("  \(load.pullClients) clients pulling pages of 1,000 events: events/s", "pull.1.rate", .rate),
        ]
    }

    /// Prints scenario 10: the backends side by side, then the two-instance run on PostgreSQL.
    func printSync(_ results: Results, events: Int) {
        if options.format == .jsonl {
            emitAll(results, events: events, type: "sync")
            return
        }
        let backends = ServerBackend.allCases.filter { results["sync.\($0.rawValue).first.rate", .eventstore] != nil }
        print(
            "10. Sync over loopback HTTP: N = \(Format.grouped(Double(events))) events over "
                + "\(Format.grouped(Double(max(1, events / 4)))) items, SyncServer → new client (HTTPTransport), "
                + "then \(options.syncRounds) rounds of \(options.syncRoundEvents) events pushed by another replica")
        print("backends: " + backends.map(\.title).joined(separator: ", ") + postgresNote(results, backends))
        if let tuning = results.notes[.eventstore]?.first(where: { $0.key.hasSuffix(".tuning") })?.value {
            print("profiling knobs set: \(tuning)")
        }
        let sideBySide = backends.count == 2
        var table = TextTable(
            header: ["Figure"] + backends.map(\.title) + (sideBySide ? ["PostgreSQL/LMDB"] : []) + ["Aim (issue)"])
        for row in syncRows {
            let keys = backends.map { "sync.\($0.rawValue)." + row.key }
            let valueKeys = keys.map { row.kind == .memory ? $0 + ".peak" : $0 }
            guard valueKeys.contains(where: { results.values[$0] != nil }) else { continue }
            let values = valueKeys.map { results[$0, .eventstore] }
            let byLMDB =
                sideBySide ? [row.kind == .count ? "" : ratio(values[1], values[0]).map(Format.ratio) ?? "—"] : []
            let aim = row.aim.map { aim in
                aimCell(aim, results, zip(backends, keys).map { ($0.title, $1, "sync.\($0.rawValue).") })
            }
            table.add([row.title] + keys.map { Report.text(results, $0, row.kind) } + byLMDB + [aim ?? ""])
        }
        print(table.render())
        print("Client peak RSS is the VmHWM of the client's own process (the servers run in another one),")
        print("mapped store pages included; peak anonymous memory (heap, stacks) in parentheses.")
        print("")
        printInstances(results)
        fflush(nil)
    }

    /// The PostgreSQL server's version and flush settings, or why it was not measured.
    private func postgresNote(_ results: Results, _ backends: [ServerBackend]) -> String {
        guard backends.contains(.postgres) else {
            return " (PostgreSQL not measured: no --postgres URL; ./Tools/Benchmarks/run.sh starts a durable one)"
        }
        let notes = results.notes[.eventstore] ?? [:]
        func setting(_ name: String) -> String { notes["sync.durable.postgres.\(name)"] ?? "?" }
        return " (PostgreSQL \(setting("server_version")), fsync \(setting("fsync")), "
            + "synchronous_commit \(setting("synchronous_commit")); LMDB stores durable)"
    }

    /// The aim's text, then whether each backend's figure meets it.
    private func aimCell(_ aim: Aim, _ results: Results, _ backends: [(name: String, key: String, prefix: String)])
        -> String
    {
        var text = ""
        var verdicts: [String] = []
        for backend in backends {
            let (aimText, met) = aim.prefixed(backend.prefix).evaluate(results, backend.key)
            text = aimText
            guard let met else { continue }
            verdicts.append((backends.count > 1 ? backend.name + " " : "") + (met ? "met" : "MISSED"))
        }
        return text + (verdicts.isEmpty ? "" : " " + verdicts.joined(separator: ", "))
    }

    // MARK: Two instances

    /// A figure of the two-instance run: its key with one instance, and with two.
    private struct InstanceRow {
        var title: String
        var one: String
        var two: String
        var kind: Kind
        var aim: Aim? = nil
    }

    /// Prints the two-instance run on PostgreSQL, when there was one.
    private func printInstances(_ results: Results) {
        let prefix = "sync.postgres."
        guard results[prefix + "push.2.rate", .eventstore] != nil else { return }
        let load = options
        let rows = [
            InstanceRow(
                title: "  \(load.pushClients) clients, \(load.pushEvents) events per push, one store: pushes/s",
                one: "push.1.rate", two: "push.2.rate", kind: .rate),
            InstanceRow(
                title: "  … one store: push round trip, p99 (ms)", one: "push.1.p99", two: "push.2.p99",
                kind: .milliseconds),
            InstanceRow(
                title: "  … a store per client: pushes/s", one: "push.1.stores.rate", two: "push.2.stores.rate",
                kind: .rate),
            InstanceRow(
                title: "  … a store per client: push round trip, p99 (ms)", one: "push.1.stores.p99",
                two: "push.2.stores.p99", kind: .milliseconds),
            InstanceRow(
                title: "  pulled events/s (\(load.pullClients) clients, pages of 1,000)", one: "pull.1.rate",
                two: "pull.2.rate", kind: .rate),
            InstanceRow(title: "  live pull, p50 (ms)", one: "live.p50", two: "live.across.p50", kind: .milliseconds),
            InstanceRow(
                title: "  live pull, p99 (ms)", one: "live.p99", two: "live.across.p99", kind: .milliseconds,
                aim: .livePull),
        ]
        print(
            "10b. Two SyncServer instances on one PostgreSQL database (each with its own connection pool; client k on")
        print(
            "instance k mod n). Live pull: with 1, push and waiting pull on the same instance; with 2, on different ones."
        )
        var table = TextTable(header: ["Figure", "1 instance", "2 instances", "2 / 1", "Aim (issue)"])
        for row in rows {
            let (one, two) = (prefix + row.one, prefix + row.two)
            let aim = row.aim.map { aim in
                aimCell(aim, results, [("1 instance", one, prefix), ("2 instances", two, prefix)])
            }
            table.add([
                row.title, Report.text(results, one, row.kind), Report.text(results, two, row.kind),
                ratio(results[two, .eventstore], results[one, .eventstore]).map(Format.ratio) ?? "—", aim ?? "",
            ])
        }
        print(table.render())
        print("")
    }
}
