/// The binary form of an ``UpcastStep`` in the configuration record (see
/// ``ConfigurationRecord`` for the layout). Canonical: a mapping's pairs are written sorted by
/// their key's bytes.
extension UpcastStep {
    func write(to writer: inout ByteWriter) {
        switch self {
        case .renameField(let old, let new):
            writer.write(UInt8(1))
            writer.write(string: old)
            writer.write(string: new)
        case .setDefault(let field, let value):
            writer.write(UInt8(2))
            writer.write(string: field)
            writer.write(value)
        case .removeField(let field):
            writer.write(UInt8(3))
            writer.write(string: field)
        case .mapValues(let field, let mapping, let otherwise):
            writer.write(UInt8(4))
            writer.write(string: field)
            let pairs = mapping.map { (key: UpcastStep.bytes(of: $0.key), value: $0.value) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            writer.write(varint: pairs.count)
            for pair in pairs {
                writer.write(raw: pair.key)
                writer.write(pair.value)
            }
            writer.write(otherwise == nil ? UInt8(0) : UInt8(1))
            if let otherwise { writer.write(otherwise) }
        case .splitField(let field, let separator, let parts):
            writer.write(UInt8(5))
            writer.write(string: field)
            writer.write(string: separator)
            writer.write(varint: parts.count)
            for part in parts { writer.write(string: part) }
        case .moveToCollection(let collection, nil):
            writer.write(UInt8(6))
            writer.write(string: collection)
        case .moveToCollection(let collection, let version?):
            writer.write(UInt8(7))
            writer.write(string: collection)
            writer.write(varint: UInt64(version))
        }
    }

    init(reading reader: inout ByteReader) throws {
        switch try reader.readByte() {
        case 1: self = .renameField(try reader.readString(), to: try reader.readString())
        case 2: self = .setDefault(try reader.readString(), try reader.readValue())
        case 3: self = .removeField(try reader.readString())
        case 4:
            let field = try reader.readString()
            var mapping: [Value: Value] = [:]
            for _ in 0..<(try reader.readCount(minimumBytesEach: 2)) {
                let key = try reader.readValue()
                mapping[key] = try reader.readValue()
            }
            let otherwise: Value? =
                switch try reader.readByte() {
                case 0: nil
                case 1: try reader.readValue()
                default: throw ByteReader.corrupt("upcast step (map default flag)")
                }
            self = .mapValues(field, mapping, otherwise: otherwise)
        case 5:
            let field = try reader.readString()
            let separator = try reader.readString()
            let parts = try (0..<(try reader.readCount(minimumBytesEach: 1))).map { _ in try reader.readString() }
            self = .splitField(field, separator: separator, into: parts)
        case 6: self = .moveToCollection(try reader.readString())
        case 7:
            let collection = try reader.readString()
            let version = try reader.readVarint()
            guard version <= UInt64(UInt16.max) else { throw ByteReader.corrupt("upcast step (move version)") }
            self = .moveToCollection(collection, atVersion: UInt16(version))
        case let tag: throw ByteReader.corrupt("upcast step (tag \(tag))")
        }
    }

    /// A value's binary encoding (the sort key of a mapping's pairs).
    private static func bytes(of value: Value) -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.write(value)
        return writer.bytes
    }
}
