import EventStore
import Foundation

/// EventStore through its public API: `Store.append`, `search`, `item`, `forEachEvent`,
/// `rebuildProjections`. Items hold `title`, `content` (strings) and `tags` (array of strings),
/// all searchable with the default weights (title 3, tags 2, content 1).
struct EventStoreEngine: BenchEngine {
    let context: BenchContext

    init(context: BenchContext) { self.context = context }

    private func open(_ path: String, mode: Mode) throws -> Store {
        var configuration = Store.Configuration()
        configuration.durability = mode.isDurable ? .durable : .relaxed
        if mode == .nosearch { configuration.search.defaultFields = [] }
        return try Store.open(at: path, configuration: configuration)
    }

    /// The fields a workload event sets (none for a delete).
    static func fields(_ event: WorkEvent) -> [String: Value] {
        var fields: [String: Value] = [:]
        if let title = event.title { fields["title"] = .string(title) }
        if let content = event.content { fields["content"] = .string(content) }
        if let tags = event.tags { fields["tags"] = .array(tags.map { .string($0) }) }
        return fields
    }

    static func change(_ event: WorkEvent) -> Change {
        let fields = fields(event)
        switch event.operation {
        case .put: return .put(Workload.collection, id: event.itemID, fields: fields)
        case .patch: return .patch(Workload.collection, id: event.itemID, fields: fields)
        case .delete: return .delete(Workload.collection, id: event.itemID)
        }
    }

    func append(mode: Mode) throws -> ChildResult {
        let path = context.store(.eventstore, mode)
        context.removeStore(path)
        let store = try open(path, mode: mode)
        var generator = context.workload.makeGenerator()
        var watch = Stopwatch()
        while true {
            let batch = generator.next(1_000)
            if batch.isEmpty { break }
            let changes = batch.map(EventStoreEngine.change)
            try watch.measure { _ = try store.append(changes) }
        }
        store.close()
        var result = ChildResult()
        result.figures["append.\(mode.rawValue)"] = watch.rate(generator.produced)
        result.notes["checksum"] = generator.checksum.hex
        result.notes["mix"] = "\(generator.puts) puts, \(generator.patches) patches, \(generator.deletes) deletes"
        return result
    }

    func single(mode: Mode, count: Int) throws -> ChildResult {
        let path = context.store(.eventstore, mode, scenario: "single")
        context.removeStore(path)
        let store = try open(path, mode: mode)
        var generator = context.workload.makeGenerator()
        let changes = generator.next(count).map(EventStoreEngine.change)
        var watch = Stopwatch()
        let group = context.options.singleGroup
        try watch.measure {
            var start = 0
            while start < changes.count {
                _ = try store.append(Array(changes[start..<min(start + group, changes.count)]))
                start += group
            }
        }
        store.close()
        return ChildResult(figures: ["single.\(mode.rawValue)": watch.rate(changes.count)])
    }

    func concurrent(writers: Int, perWriter: Int) throws -> ChildResult {
        let path = context.store(.eventstore, .durable, scenario: "concurrent")
        context.removeStore(path)
        let store = try open(path, mode: .durable)
        let shares = context.writerShares(writers: writers, perWriter: perWriter).map {
            $0.map { EventStoreEngine.change($0.event) }
        }
        let elapsed = try runConcurrently(writers: writers) { writer in
            for change in shares[writer] { _ = try store.append([change]) }
        }
        let head = try store.head()
        store.close()
        let total = shares.reduce(0) { $0 + $1.count }
        guard head == UInt64(total) else { throw BenchError("EventStore holds \(head) events, expected \(total)") }
        return ChildResult(figures: ["concurrent": Double(total) / (Double(elapsed) / 1e9)])
    }

    /// The query with two adjacent letters swapped in its first Latin word of 5 letters or more
    /// (the third and fourth), or as it is when it has none.
    static func withTypo(_ query: SearchCase) -> SearchCase {
        var query = query
        guard let index = query.words.firstIndex(where: { $0.count >= 5 && $0.allSatisfy(\.isASCII) }) else {
            return query
        }
        var letters = Array(query.words[index])
        letters.swapAt(2, 3)
        query.words[index] = String(letters)
        return query
    }

    static func text(_ query: SearchCase) -> String {
        if query.phrase { return "\"" + query.words.joined(separator: " ") + "\"" }
        // A trailing space makes the last word exact; without it the last word is a prefix.
        if let prefix = query.prefix { return (query.words + [prefix]).joined(separator: " ") }
        return query.words.joined(separator: " ") + " "
    }

    /// A query as FTS5 answers it: without typo tolerance (see the typo query set for it).
    static func query(_ query: SearchCase, limit: Int = 20) -> SearchQuery {
        SearchQuery(EventStoreEngine.text(query), collection: Workload.collection, limit: limit, typos: .off)
    }

    func search(exact: [SearchCase], prefix: [SearchCase], phrases: [SearchCase]) throws -> ChildResult {
        let path = context.store(.eventstore)
        try context.requireStore(path)
        let store = try open(path, mode: .durable)
        defer { store.close() }
        var result = ChildResult()
        for (name, cases) in [("exact", exact), ("prefix", prefix)] {
            let figures = try measureSearches(cases) { query in try store.search(EventStoreEngine.query(query)).count }
            figures.write(name, into: &result)
        }
        // A page of 20 with a snippet of each matched field (16 words, marked), and the tag
        // facets over every hit.
        var snippets = 0
        let highlighted = try measureSearches(exact) { query in
            var page = EventStoreEngine.query(query)
            page.highlights = HighlightOptions()
            let results = try store.search(page)
            snippets += results.reduce(0) { $0 + $1.highlights.count }
            return results.count
        }
        highlighted.write("snippets", into: &result)
        // The whole-word queries with a typo in one word (automatic tolerance: the words as
        // written find nothing, so close terms are looked up).
        let typos = try measureSearches(exact.map(EventStoreEngine.withTypo)) { query in
            try store.search(SearchQuery(EventStoreEngine.text(query), collection: Workload.collection, limit: 20))
                .count
        }
        typos.write("typos", into: &result)
        // EVSTORE_BENCH_SLOWEST=N: the N slowest queries with a typo, and the same without, on
        // standard error (to see what limits the p99).
        if let count = ProcessInfo.processInfo.environment["EVSTORE_BENCH_SLOWEST"].flatMap(Int.init) {
            var timed: [(nanoseconds: UInt64, typo: String, exact: String)] = []
            for query in exact {
                let typo = EventStoreEngine.text(EventStoreEngine.withTypo(query))
                let start = monotonicNanoseconds()
                _ = try store.search(SearchQuery(typo, collection: Workload.collection, limit: 20))
                let typoTime = monotonicNanoseconds() - start
                let exactStart = monotonicNanoseconds()
                _ = try store.search(EventStoreEngine.query(query))
                let exactTime = monotonicNanoseconds() - exactStart
                timed.append(
                    (
                        typoTime, "\(typo) \(typoTime / 1_000) µs",
                        "\(EventStoreEngine.text(query)) \(exactTime / 1_000) µs"
                    ))
            }
            for entry in timed.sorted(by: { $0.nanoseconds > $1.nanoseconds }).prefix(count) {
                FileHandle.standardError.write(
                    Data("slow typo query: \(entry.typo); as written: \(entry.exact)\n".utf8))
            }
        }
        result.figures["search.snippets.fields"] =
            Double(snippets) / Double(max(1, exact.count + min(100, exact.count)))
        let faceted = try measureSearches(exact) { query in
            var page = EventStoreEngine.query(query)
            page.facets = ["tags"]
            return try store.searchPage(page).results.count
        }
        faceted.write("facets", into: &result)
        // Phrases: the page of 20 timed; then, untimed, every match, to compare with FTS5's.
        let phrased = try measureSearches(phrases) { query in try store.search(EventStoreEngine.query(query)).count }
        phrased.write("phrases", into: &result)
        var digest = MatchDigest()
        for (index, query) in phrases.enumerated() {
            for hit in try store.search(EventStoreEngine.query(query, limit: 1_000_000)) {
                digest.add(query: index, id: hit.item.id)
            }
        }
        digest.write("phrases", into: &result)
        return result
    }

    func reads(ids: [String]) throws -> ChildResult {
        let path = context.store(.eventstore)
        try context.requireStore(path)
        let store = try open(path, mode: .durable)
        defer { store.close() }
        var found = 0
        var watch = Stopwatch()
        try watch.measure {
            for id in ids where try store.item(Workload.collection, id) != nil { found += 1 }
        }
        var batchWatch = Stopwatch()
        try batchWatch.measure {
            try store.read { reader in
                for id in ids where try reader.item(Workload.collection, id) != nil { found += 1 }
            }
        }
        var scanned = 0
        var fieldCount = 0
        var scanWatch = Stopwatch()
        try scanWatch.measure {
            try store.read { reader in
                try reader.forEachEvent { event in
                    scanned += 1
                    fieldCount += event.fields.count
                    return true
                }
            }
        }
        return .reads(
            point: watch, batch: batchWatch, ids: ids.count, scan: scanWatch, scanned: scanned, found: found)
    }

    func rebuild() throws -> ChildResult {
        let path = context.store(.eventstore)
        try context.requireStore(path)
        let store = try open(path, mode: .durable)
        defer { store.close() }
        let head = try store.head()
        var watch = Stopwatch()
        try watch.measure { try store.rebuildProjections() }
        return ChildResult(figures: ["rebuild": watch.rate(Int(head))])
    }

    func size() throws -> ChildResult {
        let path = context.store(.eventstore)
        try context.requireStore(path)
        var result = ChildResult()
        result.figures["size"] = Double(fileSize(path + "/data.mdb")) / 1_048_576
        if let compacted = try compactedSize(path) { result.figures["size.compacted"] = compacted }
        var search = 0
        for (name, bytes) in try LMDBBreakdown.databases(at: path) {
            result.figures["size.db.\(name)"] = Double(bytes) / 1_048_576
            if name.contains("search_") { search += bytes }
        }
        result.figures["size.search"] = Double(search) / 1_048_576
        return result
    }
}
