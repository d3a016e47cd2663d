package import EventStore
import Foundation

/// The logic of `evstore replay`, `explain`, `diff`, `verify`, `stats` and `search`, shared by
/// the executable and the tests. Each prints through an ``Output`` in a table or JSON lines.
package enum Inspect {
    /// Prints a verification report; returns whether the store is consistent.
    ///
    /// JSON lines: one `{"kind", "database", "key", "detail"}` per problem (`kind`: `log-gap`,
    /// `undecodable-event`, `event-id-mismatch`, `bad-key` for the log; `missing`, `unexpected`,
    /// `different` for a projection entry compared with a rebuild),
    /// then the summary `{"consistent", "events", "entries", "problems", "truncated", "snapshot",
    /// "skipped"}` (`snapshot`: the head of the snapshot verified when the store was written during
    /// the check, else `null`; `skipped`: the names of the custom projections the store records
    /// that the tool cannot run, whose data was not compared — see
    /// ``EventStore/VerificationReport/skippedProjections``).
    @discardableResult
    package static func printVerification(
        _ report: VerificationReport, snapshotHead: UInt64? = nil, format: OutputFormat, output: Output
    ) -> Bool {
        switch format {
        case .jsonl:
            for problem in report.problems {
                output.line(
                    Rendering.jsonLine([
                        "kind": .string(problem.kind), "database": .string(problem.database),
                        "key": .string(problem.key),
                        "detail": .string(problem.detail),
                    ]))
            }
            output.line(
                Rendering.jsonLine([
                    "consistent": .bool(report.isConsistent), "events": .int(Int64(report.eventsChecked)),
                    "entries": .int(Int64(report.entriesCompared)), "problems": .int(Int64(report.problems.count)),
                    "truncated": .bool(report.truncated), "snapshot": snapshotHead.map { .int(Int64($0)) } ?? .null,
                    "skipped": .array(report.skippedProjections.map { .string($0.name) }),
                ]))
        case .table:
            if let snapshotHead {
                output.line(
                    "(the store was written during the check: verified a consistent snapshot at seq \(snapshotHead))")
            }
            if !report.problems.isEmpty {
                var table = Table(columns: ["problem", "database", "key", "detail"])
                for problem in report.problems.prefix(50) {
                    table.add([problem.kind, problem.database, problem.key, problem.detail])
                }
                table.render().forEach(output.line)
                if report.problems.count > 50 {
                    output.line(
                        "… and \(report.problems.count - 50)\(report.truncated ? "+" : "") more (--format jsonl lists them all)"
                    )
                }
                output.line()
            }
            if report.isConsistent {
                output.line(
                    "ok: \(report.eventsChecked) events, \(report.entriesCompared) projection entries equal a rebuild from the log"
                )
                output.line("  ✔ log: dense seqs from 1, unique event ids, every event decodes")
                output.line(
                    "  ✔ projections: items, history, conflicts and search index equal a rebuild, byte for byte")
            } else {
                let count = "\(report.problems.count)\(report.truncated ? "+" : "")"
                output.line(
                    "FAILED: \(count) problem\(report.problems.count == 1 ? "" : "s") (\(report.eventsChecked) events checked)"
                )
                output.line(
                    "  projections can be rebuilt from the log with `evstore rebuild`; log problems need a backup")
            }
            for projection in report.skippedProjections {
                output.line("  – \(skippedLine(projection)); verify it from the application that registers it")
            }
        }
        return report.isConsistent
    }

    /// Prints store statistics.
    ///
    /// JSON lines: `{"kind": "summary", "events", "items" {collection: count}, "conflicts",
    /// "map_size", "used_bytes", "file_bytes", "page_size", "readers", "max_readers", "generation"}`,
    /// then one `{"kind": "database", "database", "entries", "depth", "branch_pages", "leaf_pages",
    /// "overflow_pages", "bytes"}` per named database.
    package static func printStatistics(_ stats: StoreStatistics, fileBytes: Int?, format: OutputFormat, output: Output)
    {
        switch format {
        case .jsonl:
            output.line(
                Rendering.jsonLine([
                    "kind": "summary", "events": .int(Int64(stats.events)), "conflicts": .int(Int64(stats.conflicts)),
                    "items": .object(stats.items.mapValues { .int(Int64($0)) }), "map_size": .int(Int64(stats.mapSize)),
                    "used_bytes": .int(Int64(stats.usedBytes)),
                    "file_bytes": fileBytes.map { .int(Int64($0)) } ?? .null,
                    "page_size": .int(Int64(stats.pageSize)), "readers": .int(Int64(stats.readersInUse)),
                    "max_readers": .int(Int64(stats.maxReaders)), "generation": .int(Int64(stats.generation)),
                ]))
            for db in stats.databases {
                output.line(
                    Rendering.jsonLine([
                        "kind": "database", "database": .string(db.name), "entries": .int(Int64(db.entries)),
                        "depth": .int(Int64(db.depth)), "branch_pages": .int(Int64(db.branchPages)),
                        "leaf_pages": .int(Int64(db.leafPages)), "overflow_pages": .int(Int64(db.overflowPages)),
                        "bytes": .int(Int64(db.bytes)),
                    ]))
            }
        case .table:
            // Saturating: the counters are read from the store, and damaged ones must not trap here.
            let items = stats.items.values.reduce(0) { sum, count in
                let (total, overflow) = sum.addingReportingOverflow(count)
                return overflow ? .max : total
            }
            let perCollection = stats.items.keys.sorted().map { "\($0) \(stats.items[$0]!)" }.joined(separator: ", ")
            let percent = stats.mapSize > 0 ? Double(stats.usedBytes) * 100 / Double(stats.mapSize) : 0
            var summary = Table(columns: ["", ""])
            summary.add(["events", "\(stats.events)"])
            summary.add(["items", items == 0 ? "0" : "\(items)  (\(perCollection))"])
            summary.add(["conflicts", "\(stats.conflicts)"])
            summary.add([
                "map",
                "\(Rendering.bytes(stats.usedBytes)) used of \(Rendering.bytes(stats.mapSize)) (\(String(format: "%.2f", percent))%)",
            ])
            if let fileBytes { summary.add(["data file", Rendering.bytes(fileBytes)]) }
            summary.add(["page size", "\(stats.pageSize) B"])
            summary.add(["readers", "\(stats.readersInUse) of \(stats.maxReaders) slots in use"])
            summary.add(["generation", "g\(stats.generation) (projection databases g\(stats.generation).*)"])
            summary.render().dropFirst(2).forEach(output.line)
            output.line()
            var table = Table(columns: ["database", "entries", "depth", "branch", "leaf", "overflow", "size"])
            table.rightAligned = [1, 2, 3, 4, 5, 6]
            for db in stats.databases {
                table.add([
                    db.name, "\(db.entries)", "\(db.depth)", "\(db.branchPages)", "\(db.leafPages)",
                    "\(db.overflowPages)",
                    Rendering.bytes(db.bytes),
                ])
            }
            table.render().forEach(output.line)
        }
    }

    /// Prints search results, their highlights when the query asked for them, and the facets.
    ///
    /// JSON lines: `{"score", "typos", "collection", "id", "fields", "highlights"}`, best first, where
    /// `highlights` maps each matched field to `{"text", "ranges": [[start, end]…] (UTF-8 byte
    /// offsets in text), "marked", "cut_before", "cut_after"}` (`{}` without `--snippets`); then,
    /// when facets were asked for, one line `{"total", "facets": {field: [{"value", "count"}…]}}`.
    package static func printSearch(_ page: SearchPage, facets: Bool, format: OutputFormat, output: Output) {
        switch format {
        case .jsonl:
            for result in page.results {
                output.line(
                    Rendering.jsonLine([
                        "score": .double(result.score), "typos": .int(Int64(result.typos)),
                        "collection": .string(result.item.collection), "id": .string(result.item.id),
                        "fields": .object(result.item.fields),
                        "highlights": .object(
                            result.highlights.mapValues { highlight in
                                [
                                    "text": .string(highlight.text), "marked": .string(highlight.marked),
                                    "ranges": .array(
                                        highlight.ranges.map {
                                            [.int(Int64($0.lowerBound)), .int(Int64($0.upperBound))]
                                        }),
                                    "cut_before": .bool(highlight.cutBefore), "cut_after": .bool(highlight.cutAfter),
                                ]
                            }),
                    ]))
            }
            if facets {
                output.line(
                    Rendering.jsonLine([
                        "total": .int(Int64(page.total)),
                        "facets": .object(
                            page.facets.mapValues { counts in
                                .array(counts.map { ["value": $0.value, "count": .int(Int64($0.count))] })
                            }),
                    ]))
            }
        case .table:
            let highlights = page.results.contains { !$0.highlights.isEmpty }
            var table = Table(columns: ["score", "item", "title", highlights ? "matches" : "fields"])
            for result in page.results {
                let last =
                    highlights
                    ? result.highlights.keys.sorted().map { "\($0): \(result.highlights[$0]!.marked)" }.joined(
                        separator: " · ")
                    : Rendering.fields(result.item.fields.filter { $0.key != "title" })
                table.add([
                    String(format: "%.3f", result.score), "\(result.item.collection)/\(result.item.id)",
                    result.item["title"]?.stringValue ?? "", last,
                ])
            }
            table.render().forEach(output.line)
            if page.results.isEmpty { output.line("(no results)") }
            if facets {
                output.line("\(page.total) hits")
                for field in page.facets.keys.sorted() {
                    let counts = page.facets[field]!.map { "\(Rendering.text($0.value)) (\($0.count))" }
                    output.line("\(field): " + (counts.isEmpty ? "(none)" : counts.joined(separator: ", ")))
                }
            }
        }
    }
}
