package import EventStore
import Foundation

/// `evstore query`: a ``EventStore/Query`` from the command line, answered read-only from the
/// store's declared indexes.
///
/// Filters are `FIELD OP VALUE` with `OP` one of `==` (or `=`), `!=`, `<`, `<=`, `>`, `>=`,
/// `in` (a JSON array), `between` (a JSON array of two bounds), `prefix`, or `FIELD is-missing`.
/// A value is read as JSON when it parses (`3`, `2.5`, `true`, `null`, `"a b"`, `[1,2]`), else
/// as a plain string (`open`). Sorts are `FIELD` or `FIELD:desc`.
///
/// With `--format jsonl` each item is one line as `dump --items` prints it, and when more pages
/// follow, a last line `{"cursor":"q1.…"}` holds the cursor to pass to `--after`; in a table the
/// cursor follows on a line `next page: --after q1.…`.
package struct QueryItems: Sendable {
    /// The collection.
    package var collection: String
    /// Filters, `FIELD OP VALUE`, all of which must hold.
    package var filters: [String] = []
    /// Sort fields, `FIELD` or `FIELD:desc`.
    package var sorts: [String] = []
    /// The page size.
    package var limit: Int?
    /// The cursor of the previous page.
    package var after: String?
    /// Print the number of matching items instead of the items.
    package var count = false
    /// Read every item when no index serves the query.
    package var allowsScan = false
    /// Table or JSON lines.
    package var format: OutputFormat = .table

    /// Creates a query of `collection`.
    package init(collection: String) {
        self.collection = collection
    }

    /// The query the options describe.
    ///
    /// - Throws: ``ToolError/usage(_:)`` for a filter or sort that does not parse.
    package func query() throws -> Query {
        var query = Query(collection, limit: limit, after: after, allowsScan: allowsScan)
        for filter in filters { query = query.filter(try QueryItems.filter(filter)) }
        for sort in sorts {
            let parts = sort.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let field = parts.first, !field.isEmpty else {
                throw ToolError.usage("--sort \(sort.debugDescription): no field")
            }
            switch parts.count == 2 ? parts[1].lowercased() : "asc" {
            case "asc": query = query.sorted(by: field)
            case "desc": query = query.sorted(by: field, .descending)
            default: throw ToolError.usage("--sort \(sort.debugDescription): the direction is asc or desc")
            }
        }
        return query
    }

    /// Parses `FIELD OP VALUE`.
    package static func filter(_ text: String) throws -> Filter {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(where: \.isWhitespace) else {
            throw ToolError.usage("--where \(text.debugDescription): expected FIELD OP VALUE (or FIELD is-missing)")
        }
        let field = String(trimmed[..<space])
        let rest = trimmed[space...].trimmingCharacters(in: .whitespaces)
        let op = String(rest.prefix { !$0.isWhitespace })
        let operand = rest.dropFirst(op.count).trimmingCharacters(in: .whitespaces)
        if op == "is-missing" {
            guard operand.isEmpty else {
                throw ToolError.usage("--where \(text.debugDescription): is-missing takes no value")
            }
            return .missing(field)
        }
        guard !operand.isEmpty else { throw ToolError.usage("--where \(text.debugDescription): no value after \(op)") }
        let value = QueryItems.value(operand)
        switch op {
        case "==", "=": return .equal(field, value)
        case "!=": return .notEqual(field, value)
        case "<": return .less(field, value)
        case "<=": return .lessOrEqual(field, value)
        case ">": return .greater(field, value)
        case ">=": return .greaterOrEqual(field, value)
        case "prefix": return .prefix(field, value.stringValue ?? operand)
        case "in":
            guard let values = value.arrayValue else {
                throw ToolError.usage("--where \(text.debugDescription): in takes a JSON array")
            }
            return .oneOf(field, values)
        case "between":
            guard let bounds = value.arrayValue, bounds.count == 2 else {
                throw ToolError.usage("--where \(text.debugDescription): between takes a JSON array of two bounds")
            }
            return .between(field, bounds[0], bounds[1])
        default:
            throw ToolError.usage(
                "--where \(text.debugDescription): unknown operator \(op.debugDescription) (==, !=, <, <=, >, >=, in, between, prefix, is-missing)"
            )
        }
    }

    /// A JSON value, or the text as a string when it is not JSON.
    static func value(_ text: String) -> Value {
        (try? Value(json: Array(text.utf8))) ?? .string(text)
    }

    /// Prints the page (or the count).
    package func run(store: Store, output: Output) throws {
        let query = try query()
        if count {
            let number = try store.count(query)
            switch format {
            case .jsonl: output.line(Rendering.jsonLine(["count": .int(Int64(number))]))
            case .table: output.line("\(number)")
            }
            return
        }
        let page = try store.query(query)
        switch format {
        case .jsonl:
            for item in page.items { output.line(Rendering.jsonLine(item)) }
            if let next = page.next { output.line(Rendering.jsonLine(["cursor": .string(next)])) }
        case .table:
            var table = Table(columns: ["id", "version", "fields"])
            for item in page.items {
                table.add([item.id, Rendering.stamp(item.version), Rendering.fields(item.fields)])
            }
            table.render().forEach(output.line)
            if let next = page.next { output.line("next page: --after \(next)") }
        }
    }
}

/// `evstore index`: declares an index on an existing store and builds it from the items.
package enum DeclareIndex {
    /// Declares `index` on the store at `path` (opened for writing; a new index is built from
    /// the items in the open's transaction, one already declared is left as it is) and reports
    /// it: `index tasks(done,due) is declared (1200 items)`.
    ///
    /// - Throws: ``ToolError`` when the store cannot be opened or the index cannot be declared.
    package static func run(path: String, index: IndexDefinition, output: Output) throws {
        let store = try StoreAccess.openWritable(path, indexes: [index])
        defer { store.close() }
        guard store.configuration.indexes.contains(index) else {
            throw ToolError("\(path): the index \(index.name) could not be declared")
        }
        output.line("index \(index.name) is declared (\(try store.count(in: index.collection)) items)")
    }
}
