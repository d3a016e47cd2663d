/// The field names of the last item record a reader built a dictionary of, with that
/// dictionary: a reader of many items (a query page, a page of a collection) passes one to
/// ``ItemRecordView/fields(template:)``, and a record with the same names, as the items of
/// one collection mostly have, becomes a copy of the dictionary with its values replaced in
/// place, without a string made or a hash taken for any name.
///
/// A dictionary's copy keeps its layout, so the positions of the names found once stay valid in
/// every copy. A value the reader holds in a variable of its own: a class's stored properties
/// would pay a dynamic exclusivity check at every access, several per field.
struct FieldsTemplate {
    /// The names' bytes, one after another, and where each ends.
    private var names: [UInt8] = []
    private var ends: [Int] = []
    /// The dictionary of the record that set the template, and where each name sits in it.
    private var dictionary: [String: Value] = [:]
    private var positions: [Dictionary<String, Value>.Index] = []
    /// Records that did not match since the template last did: a reader of items with varied
    /// names remembers only after 1, 2, 4, 8… of them, so that it seldom pays for a template
    /// it will not use.
    private var misses = 0
    /// Records whose fields were made from the template.
    private(set) var hits = 0

    /// The most fields a template holds: records with more build their dictionaries anew.
    static let maximumFields = 32

    var fieldCount: Int { ends.count }

    /// A copy of the template's dictionary, whose values ``Parts/set(_:at:in:)`` replaces.
    var copy: [String: Value] { dictionary }

    /// The template's names and their positions, borrowed for a walk over a record's fields.
    struct Parts {
        fileprivate let names: UnsafeRawBufferPointer
        fileprivate let ends: UnsafeBufferPointer<Int>
        fileprivate let positions: UnsafeBufferPointer<Dictionary<String, Value>.Index>

        /// Whether the template's `index`th name is `name`.
        func matches(_ name: UnsafeRawBufferPointer, at index: Int) -> Bool {
            let start = index == 0 ? 0 : ends[index - 1]
            return name.count == ends[index] - start
                && compareBytes(UnsafeRawBufferPointer(rebasing: names[start..<ends[index]]), name) == 0
        }

        /// Sets the value of the template's `index`th name in a ``FieldsTemplate/copy``.
        func set(_ value: Value, at index: Int, in fields: inout [String: Value]) {
            fields.values[positions[index]] = value
        }
    }

    /// Calls `body` with the template's parts (valid during the call): a walk's closure that
    /// captured the template itself would retain and release its arrays at every field.
    func withParts<Result>(_ body: (Parts) throws -> Result) rethrows -> Result {
        try names.withUnsafeBytes { names in
            try ends.withUnsafeBufferPointer { ends in
                try positions.withUnsafeBufferPointer { positions in
                    try body(Parts(names: names, ends: ends, positions: positions))
                }
            }
        }
    }

    /// Counts a record that matched.
    mutating func matched() {
        misses = 0
        hits += 1
    }

    /// Counts a record that did not match, and tells whether to remember its fields.
    mutating func missed() -> Bool {
        misses += 1
        return misses & (misses - 1) == 0
    }

    /// Makes `fields`, decoded from a record whose names in order were `ordered`, the template.
    mutating func remember(_ fields: [String: Value], ordered: [String]) {
        // (A record without fields never gets here: see ItemRecordView.fields(template:).)
        guard ordered.count <= FieldsTemplate.maximumFields, ordered.count == fields.count else { return }
        names.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        for name in ordered {
            names.append(contentsOf: name.utf8)
            ends.append(names.count)
            positions.append(fields.index(forKey: name)!)
        }
        dictionary = fields
    }
}
