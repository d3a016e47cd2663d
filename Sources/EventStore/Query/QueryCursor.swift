/// The keyset cursor of a query page (``QueryPage/next``): an opaque string naming the last row
/// of the page by its values in the query's order and its item id.
///
/// The next page starts strictly after that row, wherever it now sits: rows inserted or removed
/// before it meanwhile shift nothing, and the row itself may have changed or gone. A cursor is
/// bound to its query: its collection, filter, order and the index that answers it; used with
/// another query, or damaged, it throws ``EventStoreError/Code/invalidQuery``.
///
/// Format (`q1.` then unpadded base64url):
///
/// ```
/// u8      version (1)
/// u64     query fingerprint (FNV-1a of collection, filter, order and index), big-endian
/// varint  value count, then per value: u8 (0 missing, 1 present), the value's binary encoding
/// string  item id
/// u32     checksum of the bytes before it (FNV-1a, folded), big-endian
/// ```
struct QueryCursor: Hashable {
    /// The last row's values of the order fields (`nil`: missing).
    var values: [Value?]
    /// The last row's item id.
    var id: String

    static let prefix = "q1."
    static let version: UInt8 = 1

    /// The fingerprint of what a cursor is valid for.
    static func fingerprint(_ query: Query, plan: QueryPlan) -> UInt64 {
        var hash = FNV1a()
        hash.combine(bytes: query.collection.utf8)
        hash.combine(byte: 0)
        if let filter = query.filter { filter.fingerprint(into: &hash) }
        hash.combine(byte: 0)
        hash.combine(bytes: (plan.index?.name ?? "scan").utf8)
        for field in plan.order {
            hash.combine(byte: 0)
            hash.combine(bytes: field.description.utf8)
        }
        return hash.state
    }

    func token(fingerprint: UInt64) -> String {
        var writer = ByteWriter(capacity: 64)
        writer.write(QueryCursor.version)
        writer.write(bigEndian: fingerprint)
        writer.write(varint: values.count)
        for value in values {
            if let value {
                writer.write(UInt8(1))
                writer.write(value)
            } else {
                writer.write(UInt8(0))
            }
        }
        writer.write(string: id)
        writer.write(bigEndian: QueryCursor.checksum(writer.bytes))
        return QueryCursor.prefix + Base64URL.encode(writer.bytes)
    }

    /// Decodes a token made by ``token(fingerprint:)`` for a query with `fingerprint` and
    /// `valueCount` order fields.
    init(token: String, fingerprint: UInt64, valueCount: Int) throws {
        func invalid(_ why: String) -> EventStoreError {
            EventStoreError(.invalidQuery, "the cursor \(token.prefix(40).debugDescription) \(why)")
        }
        guard token.hasPrefix(QueryCursor.prefix) else {
            throw invalid("is not a query cursor (query cursors start with \(QueryCursor.prefix))")
        }
        guard let bytes = Base64URL.decode(token.dropFirst(QueryCursor.prefix.count)), bytes.count > 5 else {
            throw invalid("is damaged")
        }
        let body = Array(bytes.dropLast(4))
        let stored = bytes.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard stored == QueryCursor.checksum(body) else { throw invalid("is damaged (checksum)") }
        let decoded = try body.withUnsafeBytes { buffer -> (UInt64, [Value?], String) in
            var reader = ByteReader(buffer)
            do {
                let version = try reader.readByte()
                guard version == QueryCursor.version else { throw invalid("has version \(version)") }
                let fingerprint = try reader.readUInt64()
                let values = try (0..<(try reader.readCount())).map { _ -> Value? in
                    try reader.readByte() == 0 ? Value?.none : try reader.readValue()
                }
                let id = try reader.readString()
                guard reader.isAtEnd else { throw invalid("is damaged") }
                return (fingerprint, values, id)
            } catch let error as EventStoreError where error.code == .corrupt {
                throw invalid("is damaged")
            }
        }
        guard decoded.0 == fingerprint, decoded.1.count == valueCount else {
            throw invalid(
                "belongs to another query (another collection, filter, order or index); start again without a cursor")
        }
        self.values = decoded.1
        self.id = decoded.2
    }

    init(values: [Value?], id: String) {
        self.values = values
        self.id = id
    }

    private static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var hash = FNV1a()
        hash.combine(bytes: bytes)
        return UInt32(truncatingIfNeeded: hash.state >> 32) ^ UInt32(truncatingIfNeeded: hash.state)
    }
}
