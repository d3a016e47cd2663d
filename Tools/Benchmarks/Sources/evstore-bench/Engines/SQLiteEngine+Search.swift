import Foundation
import GRDB

/// Scenario 4 on SQLite: FTS5 queries ranked by `bm25`, each hit's row fetched as an
/// application would show it (see ``SQLiteEngine``).
extension SQLiteEngine {
    /// An FTS5 query: every word quoted, the prefix as `"pre"*`.
    static func match(_ query: SearchCase) -> String {
        func quoted(_ word: String) -> String { "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        // A phrase within the title or the content (tags are separate values, not text).
        if query.phrase { return "{title content} : " + quoted(query.words.joined(separator: " ")) }
        var parts = query.words.map(quoted)
        if let prefix = query.prefix { parts.append(quoted(prefix) + "*") }
        return parts.joined(separator: " ")
    }

    func search(exact: [SearchCase], prefix: [SearchCase], phrases: [SearchCase]) throws -> ChildResult {
        let path = context.store(.sqlite)
        try context.requireStore(path)
        let pool = try open(path, mode: .durable)
        let sql = """
            SELECT i.id, i.title, i.content, i.tags
            FROM (SELECT rowid, rank FROM items_fts WHERE items_fts MATCH ? ORDER BY rank LIMIT 20) AS f
            JOIN items AS i ON i.pk = f.rowid
            ORDER BY f.rank
            """
        var result = ChildResult()
        for (name, cases) in [("exact", exact), ("prefix", prefix)] {
            let figures = try measureSearches(cases) { query in
                try pool.read { db in
                    let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [SQLiteEngine.match(query)])
                    var hits: [Hit] = []
                    while let row = try rows.next() {
                        let tags: String? = row[3]
                        hits.append(
                            Hit(
                                id: row[0], title: row[1], content: row[2],
                                tags: tags?.split(separator: " ").map(String.init) ?? []))
                    }
                    return hits.count
                }
            }
            figures.write(name, into: &result)
        }
        // A page of 20 with FTS5's snippet() of each column (16 tokens, marked), as an
        // application would write it (FTS5 computes a row's snippets before the sort for LIMIT).
        let snippetSQL = """
            SELECT i.id, i.title, i.content, i.tags, f.s0, f.s1, f.s2
            FROM (SELECT rowid, rank,
                         snippet(items_fts, 0, '<b>', '</b>', '…', 16) AS s0,
                         snippet(items_fts, 1, '<b>', '</b>', '…', 16) AS s1,
                         snippet(items_fts, 2, '<b>', '</b>', '…', 16) AS s2
                  FROM items_fts WHERE items_fts MATCH ? ORDER BY rank LIMIT 20) AS f
            JOIN items AS i ON i.pk = f.rowid
            ORDER BY f.rank
            """
        var snippets = 0
        let highlighted = try measureSearches(exact) { query in
            try pool.read { db in
                let rows = try Row.fetchCursor(
                    db.cachedStatement(sql: snippetSQL), arguments: [SQLiteEngine.match(query)])
                var count = 0
                while let row = try rows.next() {
                    count += 1
                    for column in 4...6 where ((row[column] as String?) ?? "").contains("<b>") { snippets += 1 }
                }
                return count
            }
        }
        highlighted.write("snippets", into: &result)
        result.figures["search.snippets.fields"] =
            Double(snippets) / Double(max(1, exact.count + min(100, exact.count)))
        // The page, and the tag counts over every hit (tags are stored space-separated).
        let facetSQL = """
            SELECT i.tags FROM items_fts JOIN items AS i ON i.pk = items_fts.rowid WHERE items_fts MATCH ?
            """
        let faceted = try measureSearches(exact) { query in
            try pool.read { db in
                let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [SQLiteEngine.match(query)])
                var count = 0
                while try rows.next() != nil { count += 1 }
                var tags: [String: Int] = [:]
                let all = try String?.fetchCursor(
                    db.cachedStatement(sql: facetSQL), arguments: [SQLiteEngine.match(query)])
                while let value = try all.next() {
                    for tag in Set((value ?? "").split(separator: " ")) { tags[String(tag), default: 0] += 1 }
                }
                return count
            }
        }
        faceted.write("facets", into: &result)
        // Phrases: the page of 20 timed; then, untimed, every match, to compare with EventStore's.
        let phrased = try measureSearches(phrases) { query in
            try pool.read { db in
                let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [SQLiteEngine.match(query)])
                var count = 0
                while try rows.next() != nil { count += 1 }
                return count
            }
        }
        phrased.write("phrases", into: &result)
        let matchSQL = "SELECT i.id FROM items_fts JOIN items AS i ON i.pk = items_fts.rowid WHERE items_fts MATCH ?"
        var digest = MatchDigest()
        try pool.read { db in
            for (index, query) in phrases.enumerated() {
                let ids = try String.fetchCursor(
                    db.cachedStatement(sql: matchSQL), arguments: [SQLiteEngine.match(query)])
                while let id = try ids.next() { digest.add(query: index, id: id) }
            }
        }
        digest.write("phrases", into: &result)
        try pool.close()
        return result
    }
}
