/// One write to a field, as conflict records and field histories show it.
public struct FieldWrite: Sendable, Hashable {
    /// The event that made the write.
    public var event: EventID
    /// The write's clock stamp.
    public var hlc: HLCTimestamp
    /// The value written; `nil` when the write cleared the field (a `put` without it, or a delete).
    public var value: Value?

    /// The write's place in the total order.
    public var stamp: Stamp { Stamp(hlc: hlc, origin: event.origin) }
}

/// A concurrent write that lost: two replicas wrote the same field without having seen each
/// other's write, and the greater stamp won.
public struct ConflictRecord: Sendable, Hashable {
    /// The collection of the item.
    public var collection: String
    /// The item's id.
    public var item: String
    /// The field both wrote.
    public var field: String
    /// The local seq of the event whose arrival revealed the conflict.
    public var seq: UInt64
    /// The write that holds the field.
    public var winner: FieldWrite
    /// The write that lost.
    public var loser: FieldWrite
}

extension ConflictRecord {
    static let formatVersion: UInt8 = 1

    func encodedValue() -> [UInt8] {
        var writer = ByteWriter(capacity: 96)
        writer.write(ConflictRecord.formatVersion)
        for write in [winner, loser] {
            writer.write(write.event.origin)
            writer.write(varint: write.event.sequence)
            writer.write(bigEndian: write.hlc.rawValue)
            if let value = write.value {
                writer.write(UInt8(1))
                writer.write(value)
            } else {
                writer.write(UInt8(0))
            }
        }
        return writer.bytes
    }

    init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        // key: collection NUL item NUL seq(8) field
        guard let first = key.firstIndex(of: 0),
            let second = key[(first + 1)...].firstIndex(of: 0), key.count >= second + 9
        else { throw EventStoreError(.corrupt, "conflict key") }
        let (collection, item) = try Keys.splitItem(UnsafeRawBufferPointer(rebasing: key[..<second]))
        let seq = try Keys.seq(from: UnsafeRawBufferPointer(rebasing: key[(second + 1)..<(second + 9)]))
        guard let field = String(validating: UnsafeRawBufferPointer(rebasing: key[(second + 9)...]), as: UTF8.self)
        else { throw EventStoreError(.corrupt, "conflict field name") }
        var reader = ByteReader(value)
        guard try reader.readByte() == ConflictRecord.formatVersion else { throw ByteReader.corrupt("conflict format") }
        var writes: [FieldWrite] = []
        for _ in 0..<2 {
            let origin = try reader.readReplicaID()
            let sequence = try reader.readVarint()
            let hlc = HLCTimestamp(rawValue: try reader.readUInt64())
            let value: Value? = try reader.readByte() == 1 ? try reader.readValue() : Value?.none
            writes.append(FieldWrite(event: EventID(origin: origin, sequence: sequence), hlc: hlc, value: value))
        }
        self.init(collection: collection, item: item, field: field, seq: seq, winner: writes[0], loser: writes[1])
    }
}
