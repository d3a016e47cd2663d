import ArgumentParser
import EventStore
import EvstoreKit

extension EvstoreCommand {
    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the items as they were at a seq or a clock stamp.",
            discussion: """
                Examples:
                  evstore replay ./store --to 120
                  evstore replay ./store --at 117964800000000000 --collection notes
                  evstore replay ./store --to 120 --item notes/n1 --step
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "Replay the events up to this seq.") var to: UInt64?
        @Option(help: "Replay the events stamped at or before this HLC (its decimal raw value).") var at: UInt64?
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: "Only this item: ID with --collection, or COLLECTION/ID.") var item: String?
        @Flag(help: "With --item: print each event and the change it made.") var step = false
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if to != nil && at != nil { throw ValidationError("give --to or --at, not both") }
            if step && item == nil { throw ValidationError("--step needs --item") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let point: ReplayPoint = at.map { .hlc(HLCTimestamp(rawValue: $0)) } ?? .seq(to ?? .max)
                try Inspect.replay(
                    store: store, point: point, collection: collection, item: item, step: step, format: format.resolved,
                    output: .standard)
            }
        }
    }

    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show every write to an item's fields, which one won, and why.",
            discussion: """
                Examples:
                  evstore explain ./store --item notes/n1
                  evstore explain ./store --item n1 --collection notes --field title
                """)

        @OptionGroup var options: StoreOptions
        @Option(help: "The item: ID with --collection, or COLLECTION/ID.") var item: String
        @Option(help: "The item's collection.") var collection: String?
        @Option(help: "Only this field.") var field: String?
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                try Inspect.explain(
                    store: store, collection: collection, item: item, field: field, format: format.resolved, output: .standard)
            }
        }
    }

    struct Diff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare two replicas: items field by field, and the events each lacks.",
            discussion: """
                Exit status 0 when they are equal, 1 when they differ.

                Example:
                  evstore diff ./phone ./laptop
                """)

        @Argument(help: "The first store (A).") var storeA: String
        @Argument(help: "The second store (B).") var storeB: String
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let a = try StoreAccess.openReadOnly(storeA)
                let b = try StoreAccess.openReadOnly(storeB)
                let result = try Inspect.diff(a, b)
                Inspect.printDiff(result, format: format.resolved, output: .standard)
                if !result.isEqual { throw ExitCode(1) }
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the log and compare every projection with a rebuild, byte for byte.",
            discussion: """
                Exit status 0 only when the log is sound and the projections equal a rebuild.

                Example:
                  evstore verify ./store
                """)

        @OptionGroup var options: StoreOptions
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let bar = ProgressBar("verify")
                let report = try store.verify { bar.update($0.processed, of: $0.total) }
                bar.finish()
                if !Inspect.printVerification(report, format: format.resolved, output: .standard) { throw ExitCode(1) }
            }
        }
    }

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild items, history, conflicts and the search index from the log.",
            discussion: "Example:\n  evstore rebuild ./store")

        @OptionGroup var options: StoreOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openWritable(options.store)
                let bar = ProgressBar("rebuild")
                try await store.rebuildProjections { bar.update($0.processed, of: $0.total) }
                bar.finish()
                print("rebuilt the projections from \(try store.head()) events")
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Counts, sizes per named database, page statistics, map size and use.",
            discussion: "Example:\n  evstore stats ./store")

        @OptionGroup var options: StoreOptions
        @OptionGroup var format: FormatOptions

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                Inspect.printStatistics(try store.statistics(), format: format.resolved, output: .standard)
            }
        }
    }

    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the offline full-text index.",
            discussion: """
                All words must match; the last one also as a prefix.

                Examples:
                  evstore search ./store "sync design" --collection notes
                  evstore search ./store 동기화 --tag work --limit 5
                """)

        @OptionGroup var options: StoreOptions
        @Argument(help: "The query.") var query: String
        @Option(help: "Only this collection.") var collection: String?
        @Option(help: "Only items with this tag (repeatable).") var tag: [String] = []
        @Option(help: "The most results.") var limit = 20
        @Option(help: "Skip this many results.") var offset = 0
        @OptionGroup var format: FormatOptions

        func validate() throws {
            if limit < 1 { throw ValidationError("--limit must be at least 1") }
            if offset < 0 { throw ValidationError("--offset must not be negative") }
        }

        func run() async throws {
            try await runTool {
                let store = try StoreAccess.openReadOnly(options.store)
                let results = try store.search(SearchQuery(query, collection: collection, tags: tag, limit: limit, offset: offset))
                Inspect.printSearch(results, format: format.resolved, output: .standard)
            }
        }
    }
}
