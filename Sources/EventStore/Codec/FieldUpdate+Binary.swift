/// The binary form of an event's ``Event/updates`` (event format 2; see `Event+Binary`):
///
/// ```
/// varint  update count, then per update (sorted by field name bytes):
/// string  field name
/// u8      kind: 1 = counter, 2 = set
///   counter: varint zigzag increment
///   set:     varint count, added values;
///            varint count, per removal: value, varint count, per seen addition: 16 B origin, varint sequence
/// ```
extension ByteWriter {
    mutating func write(updates: [String: FieldUpdate]) {
        write(varint: updates.count)
        for index in updates.indicesInUTF8Order() {
            let (name, update) = updates[index]
            write(string: name)
            if let increment = update.increment {
                write(UInt8(1))
                write(varint: UInt64(bitPattern: (increment << 1) ^ (increment >> 63)))
                continue
            }
            write(UInt8(2))
            write(varint: update.add.count)
            for element in update.add { write(element) }
            write(varint: update.remove.count)
            for removal in update.remove {
                write(removal.element)
                write(varint: removal.seen.count)
                for id in removal.seen {
                    write(id.origin)
                    write(varint: id.sequence)
                }
            }
        }
    }
}

extension ByteReader {
    mutating func readUpdates() throws -> [String: FieldUpdate] {
        let count = try readCount(minimumBytesEach: 3)
        var updates: [String: FieldUpdate] = .reserving(count)
        for _ in 0..<count {
            let name = try readString()
            switch try readByte() {
            case 1:
                let raw = try readVarint()
                updates[name] = .increment(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
            case 2:
                var update = FieldUpdate()
                let adds = try readCount()
                update.add.reserveCapacity(adds)
                for _ in 0..<adds { update.add.append(try readValue(depth: 1)) }
                let removals = try readCount(minimumBytesEach: 2)
                update.remove.reserveCapacity(removals)
                for _ in 0..<removals {
                    let element = try readValue(depth: 1)
                    let seenCount = try readCount(minimumBytesEach: 17)
                    var seen: [EventID] = []
                    seen.reserveCapacity(seenCount)
                    for _ in 0..<seenCount {
                        let origin = try readReplicaID()
                        seen.append(EventID(origin: origin, sequence: try readVarint()))
                    }
                    update.remove.append(FieldUpdate.Removal(element: element, seen: seen))
                }
                updates[name] = update
            default:
                throw ByteReader.corrupt("field update kind")
            }
        }
        return updates
    }
}
