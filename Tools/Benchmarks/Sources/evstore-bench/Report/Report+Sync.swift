import Foundation

extension Report {
    /// The rows of scenario 10; the aims are the issue's: a first sync of 1M events in ≤ 20 s, with
    /// the client's anonymous memory ≤ 150 MiB.
    static let syncRows: [Row] = [
        Row("seed the server store, bulk, 10,000 events/txn (events/s)", "sync.seed", .rate),
        Row("first sync, server → new client: seconds", "sync.first.seconds", .seconds),
        // As a rate, so that the aim reads the same at any size (`--short` syncs 20,000 events).
        Row("first sync: events/s", "sync.first.rate", .rate, aim: .atLeast(50_000, text: "50,000 (1M in 20 s)")),
        Row(
            "first sync: client peak RSS, own process (MiB)", "sync.first.rss", .memory,
            aim: .figureAtMost("sync.first.rss.anon", 150, text: "150 MiB anonymous")),
        Row("first sync: client CPU time, user (s)", "sync.first.cpu.user", .seconds),
        Row("first sync: client CPU time, system (s)", "sync.first.cpu.system", .seconds),
        Row("first sync: client bytes written per event (KiB)", "sync.first.written", .kibibytes),
        Row("first sync: requests (pulled pages)", "sync.first.requests", .count),
        Row("client store after the first sync (MiB)", "sync.client.size", .mebibytes),
        Row("server CPU time during the client's run (s)", "sync.server.cpu", .seconds),
        Row("incremental sync pulling 100 events: p50 (ms)", "sync.incremental.p50", .milliseconds),
        Row("incremental sync pulling 100 events: p99 (ms)", "sync.incremental.p99", .milliseconds),
        Row("live pull: another replica's push → in this store, p50 (ms)", "sync.live.p50", .milliseconds),
        Row(
            "live pull: another replica's push → in this store, p99 (ms)", "sync.live.p99", .milliseconds,
            aim: .atMost(250, text: "250 ms")),
    ]

    /// Prints scenario 10: EventStore only, one value per figure.
    func printSync(_ results: Results, events: Int) {
        if options.format == .jsonl {
            emitAll(results, events: events, type: "sync")
            return
        }
        print(
            "10. Sync over loopback HTTP: N = \(Format.grouped(Double(events))) events over "
                + "\(Format.grouped(Double(max(1, events / 4)))) items, SyncServer → new client (HTTPTransport), "
                + "then \(options.syncRounds) rounds of \(options.syncRoundEvents) events pushed by another replica")
        if let tuning = results.notes[.eventstore]?["sync.durable.tuning"] { print("profiling knobs set: \(tuning)") }
        var table = TextTable(header: ["Figure", "EventStore", "Aim (issue)"])
        for row in Report.syncRows {
            let key = row.kind == .memory ? row.key + ".peak" : row.key
            guard let value = results[key, .eventstore] else { continue }
            let text: String
            switch row.kind {
            case .memory:
                let anon = results[row.key + ".anon", .eventstore] ?? 0
                text = "\(value.formatted(decimals: 0)) (\(anon.formatted(decimals: 0)))"
            case .rate, .count: text = Format.grouped(value)
            case .mebibytes: text = value.formatted(decimals: 1)
            case .times: text = Format.ratio(value)
            case .percent: text = value.formatted(decimals: 1) + "%"
            case .milliseconds, .seconds, .kibibytes: text = Format.decimal(value)
            }
            table.add(["  " + row.title, text, row.aim.map { $0.check(results, key) } ?? ""])
        }
        print(table.render())
        print("Client peak RSS is the VmHWM of the client's own process (the server runs in another one),")
        print("mapped store pages included; peak anonymous memory (heap, stacks) in parentheses.")
        print("")
        fflush(nil)
    }
}
