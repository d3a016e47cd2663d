/// How a ``Query`` is answered: which index, over which key range, in which order; from
/// ``Store/plan(_:)``.
///
/// **The planner rule.** An index of the query's collection *serves* a query when
///
/// 1. its leading fields each have an equality filter (``Filter/equal(_:_:)``, or
///    ``Filter/oneOf(_:_:)`` with one value) among the query's top-level `and` — any number of
///    them, in the index's order;
/// 2. the next field, if the query sorts, is the first sort field that equalities do not fix,
///    and the sort's other fields follow in the index's order, all in one direction; and
/// 3. it uses something: an equality, a range on the field after the equalities (`<`, `<=`,
///    `>`, `>=`, ``Filter/between(_:_:_:)``, ``Filter/prefix(_:_:)``, ``Filter/missing(_:)``),
///    or the sort.
///
/// Among the indexes that serve, the one with the most equality fields wins, then one with a
/// range, then the shorter index, then the first by name. The index's key range covers exactly
/// the equalities and the range; every other filter (`!=`, `in` with several values, `or`,
/// ranges on other fields) is checked on the items the range yields, so its cost is the size of
/// that range, not of the answer. Results come in the index's order after its equality fields
/// (``order``), then by item id, the whole scan in one direction.
///
/// No index serves: the query throws ``EventStoreError/Code/indexRequired`` naming the index to
/// declare (the equality fields, then the range field, then the sort fields), unless it
/// ``Query/allowsScan``: then every item of the collection is read and sorted in memory.
public struct QueryPlan: Sendable, Hashable, CustomStringConvertible {
    /// The index that answers the query, or `nil` for a scan of the collection.
    public var index: IndexDefinition?
    /// How many leading fields of ``index`` are fixed by equality filters.
    public var equalityFields: Int
    /// The field whose range bounds the scan, if any.
    public var rangeField: String?
    /// The order of the results: these fields, then the item id in the direction of the last one
    /// (ascending when empty).
    public var order: [SortField]
    /// The filter checked on each item the range yields (`nil`: the key range alone decides).
    public var residual: Filter?

    /// `index tasks(done,due): 1 equality, range on due, order due, then id; checks: …`.
    public var description: String {
        var text = index.map { "index \($0.name): \(equalityFields) equality field(s)" } ?? "scan of the collection"
        if let rangeField { text += ", range on \(rangeField)" }
        text += ", order " + (order.map(\.description) + ["id"]).joined(separator: ", ")
        if let residual { text += "; checks on items: \(residual)" }
        return text
    }
}
