/// The binary form of ``ItemState`` in the `items` database.
///
/// ```
/// u8      format (1)
/// varint  origin count, then 16-byte origins (sorted): fields refer to them by index
/// u8      flags: 1 = has version, 2 = has floor, 4 = floor is a delete
/// [version: u64 hlc, varint origin index]
/// [floor:   u64 hlc, varint origin index, varint sequence, u64 base]
/// varint  field count, then per field (sorted by name bytes):
///         string name, value, u64 hlc, varint origin index, varint sequence, u64 base
/// (format 2 only: add-wins sets and counters, see ``MergePolicy``)
/// varint  set count, then per set (sorted by name bytes):
///         string name, u64 touched hlc, varint origin index,
///         varint element count, then per element (sorted by value bytes):
///             value, varint live count, then per live addition: u64 hlc, varint origin index, varint sequence;
///             varint removed count, then per removed addition: varint origin index, varint sequence
/// varint  counter count, then per counter (sorted by name bytes):
///         string name, u64 touched hlc, varint origin index, varint zigzag sum
/// ```
///
/// A state without sets and counters is written in format 1. Deterministic: equal states give
/// equal bytes.
extension ItemState {
    static let formatVersion: UInt8 = 1
    /// The format of a state with add-wins sets or counters.
    static let mergedFormatVersion: UInt8 = 2

    func encoded() -> [UInt8] {
        // Items name few origins: a small sorted array beats hashing.
        var table: [ReplicaID] = []
        func note(_ origin: ReplicaID) { if !table.contains(origin) { table.append(origin) } }
        if let version { note(version.origin) }
        if let floor { note(floor.stamp.origin) }
        for field in fields.values { note(field.stamp.origin) }
        let merged = !sets.isEmpty || !counters.isEmpty
        if merged {
            for set in sets.values {
                note(set.touched.origin)
                for element in set.elements.values {
                    for addition in element.live { note(addition.stamp.origin) }
                    for id in element.removed { note(id.origin) }
                }
            }
            for counter in counters.values { note(counter.touched.origin) }
        }
        table.sort()
        func index(_ origin: ReplicaID) -> Int { table.firstIndex(of: origin)! }

        var writer = ByteWriter(capacity: 32 + table.count * 16 + fields.count * 40)
        writer.write(merged ? ItemState.mergedFormatVersion : ItemState.formatVersion)
        writer.write(varint: table.count)
        for origin in table { writer.write(origin) }
        var flags: UInt8 = 0
        if version != nil { flags |= 1 }
        if let floor { flags |= floor.isDelete ? 6 : 2 }
        writer.write(flags)
        if let version {
            writer.write(bigEndian: version.hlc.rawValue)
            writer.write(varint: index(version.origin))
        }
        if let floor {
            writer.write(bigEndian: floor.stamp.hlc.rawValue)
            writer.write(varint: index(floor.stamp.origin))
            writer.write(varint: floor.sequence)
            writer.write(bigEndian: floor.base.rawValue)
        }
        writer.write(varint: fields.count)
        let fields = self.fields
        for slot in fields.indicesInUTF8Order() {
            let (name, field) = fields[slot]
            writer.write(string: name)
            writer.write(field.value)
            writer.write(bigEndian: field.stamp.hlc.rawValue)
            writer.write(varint: index(field.stamp.origin))
            writer.write(varint: field.sequence)
            writer.write(bigEndian: field.base.rawValue)
        }
        if merged {
            func write(_ stamp: Stamp) {
                writer.write(bigEndian: stamp.hlc.rawValue)
                writer.write(varint: index(stamp.origin))
            }
            writer.write(varint: sets.count)
            for name in sets.keys.sorted(by: utf8Less) {
                let set = sets[name]!
                writer.write(string: name)
                write(set.touched)
                writer.write(varint: set.elements.count)
                for (key, state) in set.elements.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    writer.write(raw: key)
                    writer.write(varint: state.live.count)
                    for addition in state.live {
                        write(addition.stamp)
                        writer.write(varint: addition.sequence)
                    }
                    writer.write(varint: state.removed.count)
                    for id in state.removed {
                        writer.write(varint: index(id.origin))
                        writer.write(varint: id.sequence)
                    }
                }
            }
            writer.write(varint: counters.count)
            for name in counters.keys.sorted(by: utf8Less) {
                let counter = counters[name]!
                writer.write(string: name)
                write(counter.touched)
                writer.write(varint: UInt64(bitPattern: (counter.sum << 1) ^ (counter.sum >> 63)))
            }
        }
        return writer.bytes
    }

    init(decoding buffer: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(buffer)
        try self.init(reading: &reader)
        guard reader.isAtEnd else { throw ByteReader.corrupt("item (trailing bytes)") }
    }

    /// Decodes a state from the reader's position, leaving the reader after it.
    init(reading reader: inout ByteReader) throws {
        let format = try reader.readByte()
        guard format == ItemState.formatVersion || format == ItemState.mergedFormatVersion else {
            throw ByteReader.corrupt("item format")
        }
        let originCount = try reader.readCount(minimumBytesEach: 16)
        var table: [ReplicaID] = []
        table.reserveCapacity(originCount)
        for _ in 0..<originCount { table.append(try reader.readReplicaID()) }
        func origin(_ reader: inout ByteReader) throws -> ReplicaID {
            let index = try reader.readVarint()
            guard index < UInt64(table.count) else { throw ByteReader.corrupt("item origin index") }
            return table[Int(index)]
        }
        let flags = try reader.readByte()
        self.init()
        if flags & 1 != 0 {
            let hlc = HLCTimestamp(rawValue: try reader.readUInt64())
            version = Stamp(hlc: hlc, origin: try origin(&reader))
        }
        if flags & 2 != 0 {
            let hlc = HLCTimestamp(rawValue: try reader.readUInt64())
            let stamp = Stamp(hlc: hlc, origin: try origin(&reader))
            let sequence = try reader.readVarint()
            let base = HLCTimestamp(rawValue: try reader.readUInt64())
            floor = Floor(stamp: stamp, sequence: sequence, base: base, isDelete: flags & 4 != 0)
        }
        let count = try reader.readCount(minimumBytesEach: 12)
        fields = .reserving(count)
        for _ in 0..<count {
            let name = try reader.readString()
            let value = try reader.readValue()
            let hlc = HLCTimestamp(rawValue: try reader.readUInt64())
            let stamp = Stamp(hlc: hlc, origin: try origin(&reader))
            let sequence = try reader.readVarint()
            let base = HLCTimestamp(rawValue: try reader.readUInt64())
            fields[name] = Field(value: value, stamp: stamp, sequence: sequence, base: base)
        }
        guard format == ItemState.mergedFormatVersion else { return }
        func stamp(_ reader: inout ByteReader) throws -> Stamp {
            let hlc = HLCTimestamp(rawValue: try reader.readUInt64())
            return Stamp(hlc: hlc, origin: try origin(&reader))
        }
        let setCount = try reader.readCount(minimumBytesEach: 11)
        for _ in 0..<setCount {
            let name = try reader.readString()
            var set = SetField(touched: try stamp(&reader))
            let elementCount = try reader.readCount(minimumBytesEach: 3)
            for _ in 0..<elementCount {
                var state = SetField.Element(value: try reader.readValue(depth: 1))
                let liveCount = try reader.readCount(minimumBytesEach: 10)
                for _ in 0..<liveCount {
                    state.live.append(SetField.Addition(stamp: try stamp(&reader), sequence: try reader.readVarint()))
                }
                let removedCount = try reader.readCount(minimumBytesEach: 2)
                for _ in 0..<removedCount {
                    state.removed.append(EventID(origin: try origin(&reader), sequence: try reader.readVarint()))
                }
                // Kept in order whatever the bytes held: lookups search them.
                state.live.sort()
                state.removed.sort()
                set.elements[state.value.encodedBytes] = state
            }
            sets[name] = set
        }
        let counterCount = try reader.readCount(minimumBytesEach: 11)
        for _ in 0..<counterCount {
            let name = try reader.readString()
            var counter = CounterField(touched: try stamp(&reader))
            let raw = try reader.readVarint()
            counter.sum = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            counters[name] = counter
        }
        guard !sets.isEmpty || !counters.isEmpty else { throw ByteReader.corrupt("item (format 2 without sets)") }
    }
}

/// What a reader shows of a stored item state: whether the item exists, its version and its
/// values, decoded without the stamps, origins and floors that only merging needs (a query
/// reads its rows this way: a third of the work of ``ItemState/init(reading:)``).
struct ItemValues {
    var exists: Bool
    var version: HLCTimestamp
    var fields: [String: Value]

    /// Decodes an `items` record's values (an item state, then its history and search doc id;
    /// see ``ItemRecord``).
    ///
    /// - Parameter only: The fields to decode (`nil`: all); the others are skipped unbuilt.
    init(decodingRecord buffer: UnsafeRawBufferPointer, only wanted: Set<String>? = nil) throws {
        let view = try ItemRecordView(buffer)
        exists = view.exists
        version = view.version
        fields = try view.fields(only: wanted)
    }

    /// The item these values show, or `nil` when it does not exist.
    func item(collection: String, id: String) -> Item? {
        exists ? Item(collection: collection, id: id, fields: fields, version: version) : nil
    }
}
