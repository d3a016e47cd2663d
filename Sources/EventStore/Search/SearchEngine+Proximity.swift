/// Proximity: hits whose query words stand close together rank higher.
extension SearchEngine {
    /// Multiplies the score of hits whose query words stand close together by up to 2: by
    /// `1 + closeness`, the mean over consecutive query terms of how close they stand at best
    /// (``QueryText/closeness(_:_:)``: 1 adjacent and in order, 0 eight words apart or more).
    ///
    /// Only hits that could still reach the best `ranked` are scored (all when `nil`): the
    /// `ranked`-th best rank before proximity bounds the page from below, and a hit whose doubled
    /// score stays under it cannot reach the page.
    func rewardProximity(
        _ hits: inout [Hit], _ terms: Int, _ positions: (_ term: Int, _ hit: Int) -> UnsafeRawBufferPointer,
        ranked: Int?
    ) throws {
        var threshold = -Double.infinity
        if let ranked {
            guard ranked > 0 else { return }
            if hits.count > ranked { threshold = SearchEngine.kthLargest(hits.lazy.map(\.rank), k: ranked) }
        }
        var matcher = PositionMatcher()
        for index in hits.indices where hits[index].rank + hits[index].score >= threshold {
            let closeness = try matcher.closeness(terms: terms) { positions($0, index) }
            hits[index].score *= 1 + closeness
        }
    }
}
