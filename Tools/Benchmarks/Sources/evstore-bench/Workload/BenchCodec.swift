/// The item fields of the workload, as the SQLite and raw LMDB engines hold them.
struct ItemFields: Sendable, Equatable {
    var title: String?
    var content: String?
    var tags: [String]?

    init(title: String? = nil, content: String? = nil, tags: [String]? = nil) {
        self.title = title
        self.content = content
        self.tags = tags
    }

    init(_ event: WorkEvent) {
        self.init(title: event.title, content: event.content, tags: event.tags)
    }

    /// Applies a patch: the fields it carries replace the current ones.
    mutating func merge(_ patch: ItemFields) {
        if let title = patch.title { self.title = title }
        if let content = patch.content { self.content = content }
        if let tags = patch.tags { self.tags = tags }
    }
}

/// A compact binary encoding of workload events and items, for the SQLite payload column and
/// the raw LMDB engine (EventStore has its own codec). Comparable in size to EventStore's
/// format: an event carries its operation, a 16-byte origin, the origin sequence, a clock
/// stamp, the item id and the fields.
///
/// ```
/// event  u8 op · 16 B origin · u64 BE origin sequence · u64 BE stamp · string item · fields
/// item   u64 BE version stamp · fields
/// fields u8 count · (u8 tag 1 title / 2 content / 3 tags · string) …   tags joined by U+001F
/// string varint length · UTF-8
/// ```
enum BenchCodec {
    static let origin: [UInt8] = Array(0x10...0x1F)

    struct DecodedEvent {
        var operation: Operation
        var sequence: UInt64
        var stamp: UInt64
        var item: String
        var fields: ItemFields
    }

    static func encodeEvent(_ event: WorkEvent, sequence: UInt64, stamp: UInt64, into bytes: inout [UInt8]) {
        bytes.append(event.operation.rawValue)
        bytes.append(contentsOf: origin)
        appendBigEndian(sequence, to: &bytes)
        appendBigEndian(stamp, to: &bytes)
        appendString(event.itemID, to: &bytes)
        encodeFields(ItemFields(event), into: &bytes)
    }

    static func encodeItem(_ fields: ItemFields, version: UInt64, into bytes: inout [UInt8]) {
        appendBigEndian(version, to: &bytes)
        encodeFields(fields, into: &bytes)
    }

    static func encodeFields(_ fields: ItemFields, into bytes: inout [UInt8]) {
        let count = (fields.title == nil ? 0 : 1) + (fields.content == nil ? 0 : 1) + (fields.tags == nil ? 0 : 1)
        bytes.append(UInt8(count))
        if let title = fields.title {
            bytes.append(1)
            appendString(title, to: &bytes)
        }
        if let content = fields.content {
            bytes.append(2)
            appendString(content, to: &bytes)
        }
        if let tags = fields.tags {
            bytes.append(3)
            appendString(tags.joined(separator: "\u{1F}"), to: &bytes)
        }
    }

    static func decodeEvent(_ buffer: UnsafeRawBufferPointer) throws -> DecodedEvent {
        var reader = Reader(buffer: buffer)
        guard let operation = Operation(rawValue: try reader.byte()) else { throw BenchError("bad event operation") }
        try reader.skip(16)
        let sequence = try reader.bigEndian()
        let stamp = try reader.bigEndian()
        let item = try reader.string()
        let fields = try reader.fields()
        return DecodedEvent(operation: operation, sequence: sequence, stamp: stamp, item: item, fields: fields)
    }

    static func decodeItem(_ buffer: UnsafeRawBufferPointer) throws -> (version: UInt64, fields: ItemFields) {
        var reader = Reader(buffer: buffer)
        let version = try reader.bigEndian()
        return (version, try reader.fields())
    }

    static func decodeFields(_ buffer: UnsafeRawBufferPointer) throws -> ItemFields {
        var reader = Reader(buffer: buffer)
        return try reader.fields()
    }

    private static func appendBigEndian(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func appendString(_ string: String, to bytes: inout [UInt8]) {
        var length = string.utf8.count
        while length >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: length) | 0x80)
            length >>= 7
        }
        bytes.append(UInt8(length))
        bytes.append(contentsOf: string.utf8)
    }

    private struct Reader {
        let buffer: UnsafeRawBufferPointer
        var offset = 0

        mutating func byte() throws -> UInt8 {
            guard offset < buffer.count else { throw BenchError("truncated record") }
            defer { offset += 1 }
            return buffer[offset]
        }

        mutating func skip(_ count: Int) throws {
            guard offset + count <= buffer.count else { throw BenchError("truncated record") }
            offset += count
        }

        mutating func bigEndian() throws -> UInt64 {
            guard offset + 8 <= buffer.count else { throw BenchError("truncated record") }
            defer { offset += 8 }
            return UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }

        mutating func string() throws -> String {
            var length = 0
            var shift = 0
            while true {
                let next = try byte()
                length |= Int(next & 0x7F) << shift
                if next < 0x80 { break }
                shift += 7
            }
            guard offset + length <= buffer.count else { throw BenchError("truncated string") }
            defer { offset += length }
            return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), as: UTF8.self)
        }

        mutating func fields() throws -> ItemFields {
            var fields = ItemFields()
            for _ in 0..<Int(try byte()) {
                switch try byte() {
                case 1: fields.title = try string()
                case 2: fields.content = try string()
                case 3: fields.tags = try string().split(separator: "\u{1F}").map(String.init)
                default: throw BenchError("bad field tag")
                }
            }
            return fields
        }
    }
}

/// A failure of the harness itself.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
