/// The field names of the item records a reader decoded last, with their dictionaries: a
/// reader of many items (a query page, a page of a collection) passes one to
/// ``ItemRecordView/fields(template:)``, and fields whose names are those of an earlier record
/// become a copy of its dictionary with the values replaced in place, without a string made or a
/// hash taken for any name.
///
/// It keeps one set of names for each field count (up to ``maximumFields``), so that items with
/// every field and items without their optional ones do not displace each other. A
/// dictionary's copy keeps its layout, so the positions of the names found once stay valid in
/// every copy. A value the reader holds in a variable of its own: a class's stored properties
/// would pay a dynamic exclusivity check at every access, several per field.
struct FieldsTemplate {
    /// The names of one field count, and the dictionary they were found in.
    private struct Slot {
        /// The names' bytes, one after another, and where each ends.
        var names: [UInt8] = []
        var ends: [Int] = []
        /// The dictionary of the record that set the slot, and where each name sits in it.
        var dictionary: [String: Value] = [:]
        var positions: [Dictionary<String, Value>.Index] = []
        /// Records that did not match since the slot last did: a reader of varied names
        /// remembers only after 1, 2, 4, 8… of them, so that it seldom pays for names it will
        /// not see again.
        var misses = 0

        var isSet: Bool { !ends.isEmpty }

        func withParts<Result>(_ body: (Parts) throws -> Result) rethrows -> Result {
            try names.withUnsafeBytes { names in
                try ends.withUnsafeBufferPointer { ends in
                    try positions.withUnsafeBufferPointer { positions in
                        try body(Parts(names: names, ends: ends, positions: positions))
                    }
                }
            }
        }

        mutating func remember(_ fields: [String: Value], ordered: [String]) {
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

    private var slots: [Slot] = []

    /// The most fields a template remembers names for: records with more are decoded anew.
    static let maximumFields = 32

    /// Records whose fields were made from the template.
    private(set) var hits = 0

    /// The names of one slot and their positions, borrowed while a record's names are compared
    /// with them (a closure that captured the template itself would retain and release its
    /// arrays at every field).
    struct Parts {
        fileprivate let names: UnsafeRawBufferPointer
        fileprivate let ends: UnsafeBufferPointer<Int>
        fileprivate let positions: UnsafeBufferPointer<Dictionary<String, Value>.Index>

        /// Whether the `index`th name is `name`.
        func matches(_ name: UnsafeRawBufferPointer, at index: Int) -> Bool {
            let start = index == 0 ? 0 : ends[index - 1]
            return name.count == ends[index] - start
                && compareBytes(UnsafeRawBufferPointer(rebasing: names[start..<ends[index]]), name) == 0
        }

        /// Sets the value of the `index`th name in the copy of the slot's dictionary.
        func set(_ value: Value, at index: Int, in fields: inout [String: Value]) {
            fields.values[positions[index]] = value
        }
    }

    /// The fields of a record of `count` fields.
    ///
    /// - Parameters:
    ///   - match: Compares the record's names, in order, with the parts' (``Parts/matches(_:at:)``)
    ///     and sets each value in the copy it is given (``Parts/set(_:at:in:)``); returns `false`
    ///     at the first name that differs, leaving the record to be read again. The names it
    ///     compares with increase strictly and are valid UTF-8 (they were decoded by `decode`),
    ///     so a record whose names all match needs no check of its own.
    ///   - decode: Decodes the record in full, calling its argument with each name in order.
    @inline(__always)
    mutating func fields(
        count: Int, match: (Parts, inout [String: Value]) throws -> Bool,
        decode: (_ named: (String) -> Void) throws -> [String: Value]
    ) throws -> [String: Value] {
        guard count > 0, count <= FieldsTemplate.maximumFields else { return try decode { _ in } }
        if slots.count < count { slots.append(contentsOf: repeatElement(Slot(), count: count - slots.count)) }
        let slot = count - 1
        // Borrowed through the buffer: an element read from the array itself would be copied,
        // with a retain and a release of each of its arrays.
        let made = try slots.withUnsafeBufferPointer { slots -> [String: Value]? in
            guard slots[slot].isSet else { return nil }
            var fields = slots[slot].dictionary
            return try slots[slot].withParts { try match($0, &fields) } ? fields : nil
        }
        if let made {
            slots[slot].misses = 0
            hits += 1
            return made
        }
        slots[slot].misses += 1
        guard slots[slot].misses & (slots[slot].misses - 1) == 0 else { return try decode { _ in } }
        var names: [String] = []
        names.reserveCapacity(count)
        let fields = try decode { names.append($0) }
        // Names that collapse into fewer keys (canonically equal strings) are not remembered.
        if names.count == fields.count { slots[slot].remember(fields, ordered: names) }
        return fields
    }
}
