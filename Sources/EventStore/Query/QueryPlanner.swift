/// Chooses how to answer a ``Query`` (the rule is documented on ``QueryPlan``) and computes the
/// key range of the chosen index.
struct QueryPlanner {
    /// A plan with what the executor needs.
    struct Planned {
        var plan: QueryPlan
        /// Scan the key range backwards (a descending order).
        var descending: Bool
        /// The key prefix of the index and the equality values; empty for a scan.
        var prefix: [UInt8]
        /// The first key of the range (inclusive); empty for a scan.
        var start: [UInt8]
        /// The end of the range (exclusive; `nil`: to the end of the database).
        var end: [UInt8]?
        /// The bytes each component of the index's keys may use.
        var capacity: Int
    }

    /// A range of one component's encodings: `lower` inclusive, `upper` exclusive.
    private struct Interval {
        var lower: [UInt8]?
        var upper: [UInt8]?
        var exact: Bool
    }

    static func plan(_ query: Query, indexes: [IndexDefinition]) throws -> Planned {
        try validate(query)
        let conjuncts = query.filter?.conjuncts ?? []
        var equalities: [String: Value] = [:]
        var equalityOrder: [String] = []
        var ranged: [String] = []
        for conjunct in conjuncts {
            switch conjunct {
            case .equal(let field, let value):
                if equalities[field] == nil {
                    equalities[field] = value
                    equalityOrder.append(field)
                }
            case .oneOf(let field, let values) where values.count == 1:
                if equalities[field] == nil {
                    equalities[field] = values[0]
                    equalityOrder.append(field)
                }
            case .less(let field, _), .lessOrEqual(let field, _), .greater(let field, _), .greaterOrEqual(let field, _),
                .between(let field, _, _), .prefix(let field, _), .missing(let field):
                if !ranged.contains(field) { ranged.append(field) }
            default: break
            }
        }

        var best: (rank: (Int, Int, Int), planned: Planned)?
        for index in indexes where index.collection == query.collection {
            guard let planned = plan(query, index: index, conjuncts: conjuncts, equalities: equalities, ranged: ranged)
            else { continue }
            let rank = (planned.plan.equalityFields, planned.plan.rangeField == nil ? 0 : 1, -index.fields.count)
            if let current = best, current.rank >= rank { continue }
            best = (rank, planned)
        }
        if let best { return best.planned }
        guard query.allowsScan else {
            throw indexRequired(query, equalityOrder: equalityOrder, ranged: ranged)
        }
        return Planned(
            plan: QueryPlan(index: nil, equalityFields: 0, rangeField: nil, order: query.sort, residual: query.filter),
            descending: query.sort.last?.direction == .descending, prefix: [], start: [], end: nil, capacity: .max)
    }

    private static func validate(_ query: Query) throws {
        do {
            try Validation.collection(query.collection)
        } catch let error as EventStoreError {
            throw EventStoreError(.invalidQuery, error.message)
        }
        if let limit = query.limit, limit < 1 {
            throw EventStoreError(.invalidQuery, "limit \(limit): a query's limit is at least 1 (or nil for all)")
        }
        for field in query.sort.map(\.field) + Array(query.filter?.fields ?? []) where field.isEmpty {
            throw EventStoreError(.invalidQuery, "a query names an empty field")
        }
        if Set(query.sort.map(\.field)).count != query.sort.count {
            throw EventStoreError(.invalidQuery, "a query sorts by the same field twice")
        }
    }

    /// The plan using `index`, or `nil` when the index cannot serve the query.
    private static func plan(
        _ query: Query, index: IndexDefinition, conjuncts: [Filter], equalities: [String: Value], ranged: [String]
    ) -> Planned? {
        let fields = index.fields
        var fixed = 0
        while fixed < fields.count, equalities[fields[fixed]] != nil { fixed += 1 }
        let fixedFields = Set(fields[..<fixed])
        let sortRest = query.sort.filter { !fixedFields.contains($0.field) }
        let direction = sortRest.first?.direction ?? .ascending
        if !sortRest.isEmpty {
            guard sortRest.count <= fields.count - fixed, sortRest.allSatisfy({ $0.direction == direction }),
                zip(sortRest, fields[fixed...]).allSatisfy({ $0.field == $1 })
            else { return nil }
        }
        let rangeField = fixed < fields.count && ranged.contains(fields[fixed]) ? fields[fixed] : nil
        guard fixed > 0 || rangeField != nil || !sortRest.isEmpty else { return nil }

        let capacity = IndexKey.componentCapacity(fieldCount: fields.count)
        var prefix = index.keyPrefix
        var covered: [Filter] = []
        for field in fields[..<fixed] {
            let value = equalities[field]!
            if !IndexKey.append(value, capacity: capacity, to: &prefix) {
                covered.append(.equal(field, value))
                covered.append(.oneOf(field, [value]))
            }
        }
        var interval = Interval(lower: nil, upper: nil, exact: true)
        if let rangeField {
            for conjunct in conjuncts where conjunct.field == rangeField {
                guard let bounds = self.interval(conjunct, capacity: capacity) else { continue }
                interval = intersect(interval, bounds)
                if bounds.exact { covered.append(conjunct) }
            }
        }
        var residual = conjuncts
        // Only the conjuncts the index answers exactly, to the byte (not one whose string is
        // merely canonically equivalent to the one in the key).
        residual.removeAll { conjunct in covered.contains { $0.isIdentical(to: conjunct) } }
        let start = prefix + (interval.lower ?? [])
        let end = interval.upper.map { prefix + $0 } ?? IndexKey.successor(of: prefix)
        let order = fields[fixed...].map { SortField($0, direction) }
        let plan = QueryPlan(
            index: index, equalityFields: fixed, rangeField: rangeField, order: order,
            residual: residual.isEmpty ? nil : residual.count == 1 ? residual[0] : .and(residual))
        return Planned(
            plan: plan, descending: direction == .descending, prefix: prefix, start: start, end: end, capacity: capacity
        )
    }

    /// The encodings a range filter admits, or `nil` for a filter that is not a range.
    private static func interval(_ filter: Filter, capacity: Int) -> Interval? {
        func encode(_ value: Value) -> (bytes: [UInt8], truncated: Bool) {
            var bytes: [UInt8] = []
            let truncated = IndexKey.append(value, capacity: capacity, to: &bytes)
            return (bytes, truncated)
        }
        func after(_ bytes: [UInt8]) -> [UInt8]? { IndexKey.successor(of: bytes) }
        switch filter {
        case .less(_, let bound):
            let (bytes, truncated) = encode(bound)
            return Interval(lower: [bracket(bound).lower], upper: truncated ? after(bytes) : bytes, exact: !truncated)
        case .lessOrEqual(_, let bound):
            let (bytes, truncated) = encode(bound)
            return Interval(lower: [bracket(bound).lower], upper: after(bytes), exact: !truncated)
        case .greater(_, let bound):
            let (bytes, truncated) = encode(bound)
            return Interval(lower: truncated ? bytes : after(bytes), upper: [bracket(bound).upper], exact: !truncated)
        case .greaterOrEqual(_, let bound):
            let (bytes, truncated) = encode(bound)
            return Interval(lower: bytes, upper: [bracket(bound).upper], exact: !truncated)
        case .between(let field, let lower, let upper):
            guard ValueOrder.typeClass(lower) == ValueOrder.typeClass(upper) else {
                return Interval(lower: [0], upper: [0], exact: true)  // matches nothing
            }
            return intersect(
                interval(.greaterOrEqual(field, lower), capacity: capacity)!,
                interval(.lessOrEqual(field, upper), capacity: capacity)!)
        case .prefix(_, let prefix):
            var (bytes, truncated) = encode(.string(prefix))
            bytes.removeLast(2)  // the end marker: what remains prefixes every longer string
            return Interval(lower: bytes, upper: after(bytes), exact: !truncated)
        case .missing:
            return Interval(lower: [IndexKey.missing], upper: [IndexKey.null + 1], exact: true)
        default:
            return nil
        }
    }

    /// The tags of the values a range comparison with `bound` admits: `lower..<upper`.
    private static func bracket(_ bound: Value) -> (lower: UInt8, upper: UInt8) {
        switch bound {
        case .null: (IndexKey.null, IndexKey.null + 1)
        case .bool: (IndexKey.falseTag, IndexKey.trueTag + 1)
        case .int, .double: (IndexKey.number, IndexKey.number + 1)
        case .string: (IndexKey.string, IndexKey.string + 1)
        case .array: (IndexKey.array, IndexKey.array + 1)
        case .object: (IndexKey.object, IndexKey.object + 1)
        }
    }

    private static func intersect(_ lhs: Interval, _ rhs: Interval) -> Interval {
        func maximum(_ a: [UInt8]?, _ b: [UInt8]?) -> [UInt8]? {
            guard let a else { return b }
            guard let b else { return a }
            return a.lexicographicallyPrecedes(b) ? b : a
        }
        func minimum(_ a: [UInt8]?, _ b: [UInt8]?) -> [UInt8]? {
            guard let a else { return b }
            guard let b else { return a }
            return a.lexicographicallyPrecedes(b) ? a : b
        }
        return Interval(
            lower: maximum(lhs.lower, rhs.lower), upper: minimum(lhs.upper, rhs.upper), exact: lhs.exact && rhs.exact)
    }

    /// The error for a query no index serves, naming the index that would.
    private static func indexRequired(_ query: Query, equalityOrder: [String], ranged: [String]) -> EventStoreError {
        let sortFields = query.sort.map(\.field)
        var fields = equalityOrder
        let unfixedSort = sortFields.filter { !fields.contains($0) }
        if let range = ranged.first(where: { !fields.contains($0) }), unfixedSort.isEmpty || unfixedSort[0] == range {
            fields.append(range)
        }
        for field in unfixedSort where !fields.contains(field) { fields.append(field) }
        let mixed = Set(query.sort.filter { !equalityOrder.contains($0.field) }.map(\.direction)).count > 1
        var message = "no declared index serves this query on \(query.collection)"
        if fields.isEmpty {
            message +=
                ": its filters (!=, in with several values, or) cannot bound an index range; "
                + "set Query.allowsScan to read every item of the collection"
        } else {
            let suggestion = IndexDefinition(query.collection, fields: fields)
            message +=
                "; declare the index \(suggestion.name) (Store.Configuration.indexes, or "
                + "`evstore index STORE --collection \(query.collection) --fields \(fields.joined(separator: ","))`)"
            if mixed { message += " — and sort all fields in one direction (an index is read one way)" }
            message += ", or set Query.allowsScan to read every item of the collection"
        }
        return EventStoreError(.indexRequired, message)
    }
}
