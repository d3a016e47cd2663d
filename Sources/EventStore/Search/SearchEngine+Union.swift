/// The union of a query word's index terms (a prefix's expansions, a word's close terms): each
/// term's live postings are already in doc-id order, so they are merged as sorted runs, the two
/// shortest first, instead of gathered in a hash table and sorted — a common word's long list is
/// copied once, not hashed posting by posting.
extension SearchEngine {
    /// Documents in doc-id order, each with its best match among the terms merged so far.
    struct Run {
        var ids: [UInt32] = []
        var matches: [Match] = []
    }

    /// The union of `runs`: every document once, with the better of its matches (on a tie, the
    /// one of the term listed first).
    static func union(_ runs: [Run]) -> Run {
        var runs = runs.filter { !$0.ids.isEmpty }
        guard !runs.isEmpty else { return Run() }
        while runs.count > 1 {
            runs.sort { $0.ids.count > $1.ids.count }
            let shorter = runs.removeLast()
            let longer = runs.removeLast()
            runs.append(merge(shorter, longer))
        }
        return runs[0]
    }

    /// Two runs merged in doc-id order.
    private static func merge(_ first: Run, _ second: Run) -> Run {
        var merged = Run()
        merged.ids.reserveCapacity(first.ids.count + second.ids.count)
        merged.matches.reserveCapacity(first.ids.count + second.ids.count)
        var left = 0
        var right = 0
        while left < first.ids.count && right < second.ids.count {
            let leftID = first.ids[left]
            let rightID = second.ids[right]
            if leftID < rightID {
                merged.ids.append(leftID)
                merged.matches.append(first.matches[left])
                left += 1
            } else if rightID < leftID {
                merged.ids.append(rightID)
                merged.matches.append(second.matches[right])
                right += 1
            } else {
                let (one, other) = (first.matches[left], second.matches[right])
                merged.ids.append(leftID)
                merged.matches.append(
                    one.isBetter(than: other) || (!other.isBetter(than: one) && one.term < other.term) ? one : other)
                left += 1
                right += 1
            }
        }
        merged.ids.append(contentsOf: first.ids[left...])
        merged.matches.append(contentsOf: first.matches[left...])
        merged.ids.append(contentsOf: second.ids[right...])
        merged.matches.append(contentsOf: second.matches[right...])
        return merged
    }
}
