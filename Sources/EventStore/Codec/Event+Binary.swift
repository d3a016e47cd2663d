/// The binary form of an event as stored in the log (the seq is the key, not part of the value).
///
/// ```
/// u8      format version (1)
/// u8      operation (1 put, 2 patch, 3 delete)
/// varint  schema
/// 16 B    origin replica id
/// varint  origin sequence
/// u64 BE  hlc
/// u64 BE  base
/// string  collection      (varint length + UTF-8)
/// string  item
/// fields  varint count, then (name, value) sorted by name bytes; see ``Value`` tags
/// updates (format 2 only) the event's ``Event/updates``; see `FieldUpdate+Binary`
/// ```
///
/// An event without updates is written in format 1, so its bytes (and digest) are what they
/// were before updates existed. The encoding is deterministic: the same event always gives the
/// same bytes.
extension Event {
    /// The format version of an event without updates.
    static let formatVersion: UInt8 = 1
    /// The format version of an event with updates (the newest this library reads).
    static let updatesFormatVersion: UInt8 = 2

    /// The event's binary encoding.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 64 + collection.utf8.count + item.utf8.count + fields.count * 24)
        encode(into: &writer)
        return writer.bytes
    }

    func encode(into writer: inout ByteWriter) {
        writer.write(updates.isEmpty ? Event.formatVersion : Event.updatesFormatVersion)
        writer.write(operation.rawValue)
        writer.write(varint: UInt64(schema))
        writer.write(id.origin)
        writer.write(varint: id.sequence)
        writer.write(bigEndian: hlc.rawValue)
        writer.write(bigEndian: base.rawValue)
        writer.write(string: collection)
        writer.write(string: item)
        writer.write(fields: fields)
        if !updates.isEmpty { writer.write(updates: updates) }
    }

    /// Decodes an event from its binary encoding.
    ///
    /// - Throws: ``EventStoreError/Code/corrupt`` for malformed bytes,
    ///   ``EventStoreError/Code/unsupportedFormat`` for a newer format version.
    init(decoding buffer: UnsafeRawBufferPointer, seq: UInt64) throws {
        var reader = ByteReader(buffer)
        let (format, operation, schema, origin, sequence, hlc, base) = try Event.readHeader(&reader, seq: seq)
        let collection = try reader.readString()
        let item = try reader.readString()
        let fields = try reader.readFields()
        var updates: [String: FieldUpdate] = [:]
        if format == Event.updatesFormatVersion {
            updates = try reader.readUpdates()
            guard !updates.isEmpty else { throw ByteReader.corrupt("event (format 2 without updates)") }
        }
        guard reader.isAtEnd else { throw ByteReader.corrupt("event (trailing bytes)") }
        do {
            try Validation.collection(collection)
            try Validation.item(item)
        } catch let error as EventStoreError {
            throw EventStoreError(.corrupt, "stored event holds an invalid name: \(error.message)")
        }
        self.init(
            seq: seq, id: EventID(origin: origin, sequence: sequence), hlc: hlc, base: base, collection: collection,
            item: item, operation: operation, fields: fields, schema: schema, updates: updates)
    }

    /// Reads the encoding's fields before the collection: format, operation, schema, origin,
    /// origin sequence, hlc and base.
    private static func readHeader(_ reader: inout ByteReader, seq: UInt64) throws -> (
        format: UInt8, operation: EventOperation, schema: UInt16, origin: ReplicaID, sequence: UInt64,
        hlc: HLCTimestamp, base: HLCTimestamp
    ) {
        let format = try reader.readByte()
        guard format == Event.formatVersion || format == Event.updatesFormatVersion else {
            if format > Event.updatesFormatVersion {
                throw EventStoreError(.unsupportedFormat, "event at seq \(seq) uses format \(format)")
            }
            throw ByteReader.corrupt("event format byte")
        }
        guard let operation = EventOperation(rawValue: try reader.readByte()) else {
            throw ByteReader.corrupt("event operation")
        }
        let schema = try reader.readVarint()
        guard schema <= UInt64(UInt16.max) else { throw ByteReader.corrupt("event schema") }
        return (
            format, operation, UInt16(schema), try reader.readReplicaID(), try reader.readVarint(),
            HLCTimestamp(rawValue: try reader.readUInt64()), HLCTimestamp(rawValue: try reader.readUInt64())
        )
    }

    /// Reads the key of the event's item (``Keys/item(_:_:)``: collection, NUL, item) from its
    /// binary encoding into `key`, without decoding the rest of the event.
    ///
    /// - Throws: As ``init(decoding:seq:)`` for a malformed header, or bytes too short to hold
    ///   the key.
    static func itemKey(ofEncoded buffer: UnsafeRawBufferPointer, into key: inout [UInt8]) throws {
        var reader = ByteReader(buffer)
        _ = try readHeader(&reader, seq: 0)
        let collection = try reader.readBytes(try reader.readCount())
        let item = try reader.readBytes(try reader.readCount())
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: collection)
        key.append(0)
        key.append(contentsOf: item)
    }

    /// Decodes an event from a byte array.
    init(decoding bytes: [UInt8], seq: UInt64) throws {
        self = try bytes.withUnsafeBytes { try Event(decoding: $0, seq: seq) }
    }
}
