/// Counts the values of facet fields over search hits (``SearchQuery/facets``).
struct FacetCounter {
    let fields: [String]
    /// Per field, per value's order key (``IndexKey``: equal in query terms, the same key): the value
    /// and its count.
    private var counts: [String: [[UInt8]: FacetCount]] = [:]

    init(fields: [String]) { self.fields = fields }

    /// Counts one hit's values: a field's value, or each distinct element of an array.
    mutating func count(_ values: [String: Value]) {
        for field in fields {
            guard let value = values[field] else { continue }
            guard case .array(let elements) = value else {
                add(value, key: IndexKey.encoded(value), to: field)
                continue
            }
            // Each distinct element once: a linear check for the usual short lists, a set for long
            // ones (an add-wins set can grow without bound).
            if elements.count <= 16 {
                var seen: [[UInt8]] = []
                for element in elements {
                    let key = IndexKey.encoded(element)
                    guard !seen.contains(key) else { continue }
                    seen.append(key)
                    add(element, key: key, to: field)
                }
            } else {
                var seen: Set<[UInt8]> = []
                for element in elements {
                    let key = IndexKey.encoded(element)
                    guard seen.insert(key).inserted else { continue }
                    add(element, key: key, to: field)
                }
            }
        }
    }

    private mutating func add(_ value: Value, key: [UInt8], to field: String) {
        counts[field, default: [:]][key, default: FacetCount(value: value, count: 0)].count += 1
    }

    /// Per field, its values, most frequent first (then in the order queries sort them), at most
    /// `limit`.
    func result(limit: Int) -> [String: [FacetCount]] {
        var result: [String: [FacetCount]] = [:]
        for field in fields {
            let sorted = (counts[field] ?? [:]).sorted { lhs, rhs in
                lhs.value.count != rhs.value.count
                    ? lhs.value.count > rhs.value.count : lhs.key.lexicographicallyPrecedes(rhs.key)
            }
            result[field] = sorted.prefix(max(0, limit)).map(\.value)
        }
        return result
    }
}
