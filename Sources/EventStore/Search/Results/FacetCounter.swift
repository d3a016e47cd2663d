/// Counts the values of facet fields over search hits (``SearchQuery/facets``).
struct FacetCounter {
    let fields: [String]
    /// Per field, per value's encoded bytes: the value and its count.
    private var counts: [String: [[UInt8]: FacetCount]] = [:]

    init(fields: [String]) { self.fields = fields }

    /// Counts one hit's values: a field's value, or each distinct element of an array.
    mutating func count(_ values: [String: Value]) {
        for field in fields {
            guard let value = values[field] else { continue }
            let elements = value.arrayValue.map { ItemState.elements(of: .array($0)) } ?? [value]
            for element in elements {
                counts[field, default: [:]][element.encodedBytes, default: FacetCount(value: element, count: 0)]
                    .count += 1
            }
        }
    }

    /// Per field, its values, most frequent first (then by their encoded bytes), at most `limit`.
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
