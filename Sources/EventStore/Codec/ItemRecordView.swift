/// An `items` record read in place (see ``ItemRecord``): whether the item exists, its version,
/// and each field's value, decoded only when asked for.
///
/// Readers that want a few fields (a query's filter and order, a typed model's properties) find
/// them by name in the record's bytes, without building a dictionary of every field. The view
/// borrows the record: it is valid only while the read transaction that returned it is.
///
/// A record of format 2 (add-wins sets and counters) needs the whole state to show its values:
/// the view decodes it once, up front. A record whose field names are not in strictly increasing
/// byte order (as every writer keeps them) is corrupt.
struct ItemRecordView {
    /// Whether the item exists (it has fields, or it was written and not deleted).
    let exists: Bool
    /// The item's version (zero when it has none).
    let version: HLCTimestamp
    private let record: UnsafeRawBufferPointer
    /// Where the first field starts, and how many there are (format 1).
    private let fieldsStart: Int
    private let fieldCount: Int
    /// The values of a format-2 record.
    private let merged: [String: Value]?
    /// Where each of the first ``indexedFields`` fields starts (its name's length), once
    /// ``indexed()`` found them, so that a field is found by a binary search of the names
    /// instead of a walk over the values.
    private var starts = SIMD16<UInt32>()
    private var isIndexed = false
    private static let indexedFields = 16

    init(_ record: UnsafeRawBufferPointer) throws {
        self.record = record
        var reader = ByteReader(record)
        let format = try reader.readByte()
        if format == ItemState.mergedFormatVersion {
            let decoded = try ItemRecord(decoding: record)
            exists = decoded.state.exists
            version = decoded.state.version?.hlc ?? .zero
            merged = decoded.state.values
            (fieldsStart, fieldCount) = (0, 0)
            return
        }
        guard format == ItemState.formatVersion else { throw ByteReader.corrupt("item format") }
        _ = try reader.readBytes(try reader.readCount(minimumBytesEach: 16) * 16)
        let flags = try reader.readByte()
        var version = HLCTimestamp.zero
        if flags & 1 != 0 {
            version = HLCTimestamp(rawValue: try reader.readUInt64())
            _ = try reader.readVarint()
        }
        if flags & 2 != 0 {
            _ = try reader.readUInt64()
            _ = try reader.readVarint()
            _ = try reader.readVarint()
            _ = try reader.readUInt64()
        }
        let count = try reader.readCount(minimumBytesEach: 12)
        self.version = version
        self.merged = nil
        self.fieldsStart = reader.offset
        self.fieldCount = count
        self.exists = count > 0 || (flags & 2 != 0 && flags & 4 == 0)
    }

    /// The view with every field's place found and every name checked, for readers that look
    /// up several fields one by one (a model's properties): each lookup is then a binary
    /// search, and a damaged record fails here, not when a reader that cannot throw (a model's
    /// `contains`, `allKeys`) asks for a field.
    func indexed() throws -> ItemRecordView {
        guard merged == nil, !isIndexed else { return self }
        var view = self
        var field = 0
        try forEachField { name, _, start in
            guard ByteReader.isValidUTF8(name) else { throw ByteReader.corrupt("UTF-8 string") }
            if field < ItemRecordView.indexedFields { view.starts[field] = UInt32(truncatingIfNeeded: start) }
            field += 1
            return true
        }
        view.isIndexed = true
        return view
    }

    /// Calls `body` with each field's name bytes, a reader at its value and the field's offset
    /// in the record, in name order, until it returns `false`; `body` reads the value or leaves
    /// the reader where it was.
    ///
    /// - Parameter checkingOrder: Whether to check that the names increase; a walk that
    ///   compares them with names known to increase (a ``FieldsTemplate``'s) need not.
    private func forEachField(
        checkingOrder: Bool = true,
        _ body: (_ name: UnsafeRawBufferPointer, _ value: inout ByteReader, _ start: Int) throws -> Bool
    ) throws {
        var reader = ByteReader(record)
        _ = try reader.readBytes(fieldsStart)
        var previous: UnsafeRawBufferPointer?
        for _ in 0..<fieldCount {
            let field = reader.offset
            let name = try reader.readBytes(try reader.readCount())
            // Lookups rely on the order every writer keeps: names strictly increasing, so none twice.
            if checkingOrder {
                if let previous, compareBytes(previous, name) >= 0 { throw ByteReader.corrupt("item (field order)") }
                previous = name
            }
            let start = reader.offset
            if !(try body(name, &reader, field)) { return }
            if reader.offset == start { try reader.skipValue() }
            _ = try reader.readUInt64()
            _ = try reader.readVarint()
            _ = try reader.readVarint()
            _ = try reader.readUInt64()
        }
        // After the fields: nothing or a doc id (format 3), or the history and the doc id.
        guard reader.remaining == 0 || reader.remaining >= 4 else { throw ByteReader.corrupt("item (trailing bytes)") }
    }

    /// The value of field `name`, or `nil` when the item does not have it.
    func value(_ name: String) throws -> Value? {
        if let merged { return merged[name] }
        var name = name
        return try name.withUTF8 { wanted in
            let wanted = UnsafeRawBufferPointer(wanted)
            if isIndexed && fieldCount <= ItemRecordView.indexedFields {
                // Fields are sorted by name.
                var (low, high) = (0, fieldCount)
                while low < high {
                    let middle = (low + high) / 2
                    var reader = ByteReader(record)
                    _ = try reader.readBytes(Int(starts[middle]))
                    let order = compareBytes(try reader.readBytes(try reader.readCount()), wanted)
                    if order == 0 { return try reader.readValue() }
                    if order < 0 { low = middle + 1 } else { high = middle }
                }
                return nil
            }
            var found: Value?
            try forEachField { field, reader, _ in
                let order = compareBytes(field, wanted)
                if order == 0 { found = try reader.readValue() }
                // Fields are sorted by name: none after a greater one can match.
                return order < 0
            }
            return found
        }
    }

    /// The names of the item's fields, in name order.
    func names() throws -> [String] {
        if let merged { return merged.keys.sorted(by: utf8Less) }
        var names: [String] = []
        names.reserveCapacity(fieldCount)
        try forEachField { name, _, _ in
            guard let string = ByteReader.string(validating: name) else { throw ByteReader.corrupt("UTF-8 string") }
            names.append(string)
            return true
        }
        return names
    }

    /// The item's fields (`only`: just those named; `nil`: all).
    func fields(only wanted: Set<String>? = nil) throws -> [String: Value] {
        if let merged { return wanted.map { wanted in merged.filter { wanted.contains($0.key) } } ?? merged }
        return try decodeFields(only: wanted)
    }

    /// All the item's fields, through a reader's template (see ``FieldsTemplate``): the
    /// template's dictionary with the values replaced when the record has its names.
    func fields(template: inout FieldsTemplate) throws -> [String: Value] {
        if let merged { return merged }
        // An item without fields (a put of none) neither uses nor replaces the template.
        guard fieldCount > 0 else { return try decodeFields(only: nil) }
        if template.fieldCount == fieldCount, let fields = try fields(like: template) {
            template.matched()
            return fields
        }
        guard template.missed() else { return try decodeFields(only: nil) }
        var names: [String] = []
        names.reserveCapacity(fieldCount)
        let fields = try decodeFields(only: nil) { names.append($0) }
        template.remember(fields, ordered: names)
        return fields
    }

    /// All fields, as a copy of the template's dictionary, when the record's names are the
    /// template's (`nil` otherwise).
    private func fields(like template: FieldsTemplate) throws -> [String: Value]? {
        var fields = template.copy
        var index = 0
        try template.withParts { template in
            // The template's names increase (they were checked when it was made): a record whose
            // names match them needs no check of its own.
            try forEachField(checkingOrder: false) { name, reader, _ in
                guard template.matches(name, at: index) else { return false }
                template.set(try reader.readValue(), at: index, in: &fields)
                index += 1
                return true
            }
        }
        return index == fieldCount ? fields : nil
    }

    /// The fields decoded into a new dictionary, calling `named` with each name decoded.
    private func decodeFields(only wanted: Set<String>?, named: (String) -> Void = { _ in }) throws -> [String: Value] {
        var fields: [String: Value] = .reserving(min(wanted?.count ?? fieldCount, fieldCount))
        try forEachField { name, reader, _ in
            guard let string = ByteReader.string(validating: name) else { throw ByteReader.corrupt("UTF-8 string") }
            if wanted?.contains(string) ?? true {
                fields[string] = try reader.readValue()
                named(string)
            }
            return true
        }
        return fields
    }

    /// The item this record shows (of an item that ``exists``).
    func item(collection: String, id: String) throws -> Item {
        Item(collection: collection, id: id, fields: try fields(), version: version)
    }

    /// The item this record shows (of an item that ``exists``), its fields made through a
    /// reader's template.
    func item(collection: String, id: String, template: inout FieldsTemplate) throws -> Item {
        Item(collection: collection, id: id, fields: try fields(template: &template), version: version)
    }
}
