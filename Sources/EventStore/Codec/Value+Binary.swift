/// The binary form of ``Value``: a tag byte, then the payload.
///
/// | tag | value | payload |
/// |---|---|---|
/// | 0 | null | — |
/// | 1, 2 | false, true | — |
/// | 3 | int | zigzag varint |
/// | 4 | double | 8 bytes, IEEE 754 bit pattern, big-endian |
/// | 5 | string | varint length, UTF-8 |
/// | 6 | array | varint count, values |
/// | 7 | object | varint count, (key string, value) sorted by key bytes |
enum ValueTag: UInt8 {
    case null = 0, falseValue, trueValue, int, double, string, array, object
}

extension ByteWriter {
    mutating func write(_ value: Value) {
        switch value {
        case .null: write(ValueTag.null.rawValue)
        case .bool(let flag): write(flag ? ValueTag.trueValue.rawValue : ValueTag.falseValue.rawValue)
        case .int(let number):
            write(ValueTag.int.rawValue)
            write(varint: UInt64(bitPattern: (number << 1) ^ (number >> 63)))
        case .double(let number):
            write(ValueTag.double.rawValue)
            write(bigEndian: number.bitPattern)
        case .string(let string):
            write(ValueTag.string.rawValue)
            write(string: string)
        case .array(let values):
            write(ValueTag.array.rawValue)
            write(varint: values.count)
            for element in values { write(element) }
        case .object(let members):
            write(ValueTag.object.rawValue)
            write(fields: members)
        }
    }

    /// A field map: varint count, then (name, value) pairs in byte order of the names.
    mutating func write(fields: [String: Value]) {
        write(varint: fields.count)
        for index in fields.indicesInUTF8Order() {
            write(string: fields[index].key)
            write(fields[index].value)
        }
    }
}

extension ByteReader {
    /// The deepest nesting of arrays and objects a decoder accepts.
    static let maxDepth = 64

    mutating func readValue(depth: Int = 0) throws -> Value {
        guard depth <= ByteReader.maxDepth else { throw ByteReader.corrupt("value (nested too deeply)") }
        guard let tag = ValueTag(rawValue: try readByte()) else { throw ByteReader.corrupt("value tag") }
        switch tag {
        case .null: return .null
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .int:
            let raw = try readVarint()
            return .int(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
        case .double:
            let number = Double(bitPattern: try readUInt64())
            guard number.isFinite else { throw ByteReader.corrupt("value (a non-finite double)") }
            return .double(number)
        case .string: return .string(try readString())
        case .array:
            let count = try readCount()
            var values: [Value] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try readValue(depth: depth + 1)) }
            return .array(values)
        case .object:
            return .object(try readFields(depth: depth + 1))
        }
    }

    /// Moves past one value without building it (its bytes are checked as far as their shape).
    mutating func skipValue(depth: Int = 0) throws {
        guard depth <= ByteReader.maxDepth else { throw ByteReader.corrupt("value (nested too deeply)") }
        guard let tag = ValueTag(rawValue: try readByte()) else { throw ByteReader.corrupt("value tag") }
        switch tag {
        case .null, .falseValue, .trueValue: return
        case .int: _ = try readVarint()
        case .double: _ = try readUInt64()
        case .string: _ = try readBytes(try readCount())
        case .array: for _ in 0..<(try readCount()) { try skipValue(depth: depth + 1) }
        case .object:
            for _ in 0..<(try readCount(minimumBytesEach: 2)) {
                _ = try readBytes(try readCount())
                try skipValue(depth: depth + 1)
            }
        }
    }

    mutating func readFields(depth: Int = 0) throws -> [String: Value] {
        let count = try readCount(minimumBytesEach: 2)
        var fields: [String: Value] = .reserving(count)
        for _ in 0..<count {
            let name = try readString()
            fields[name] = try readValue(depth: depth)
        }
        return fields
    }
}
