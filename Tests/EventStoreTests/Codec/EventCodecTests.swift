import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// The binary encodings of values, events and item states: lossless, deterministic, pinned to
/// the documented layout, and safe on malformed bytes.
struct EventCodecTests {
    static let origin = ReplicaID(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10)

    static func event(_ operation: EventOperation, fields: [String: Value]) -> Event {
        Event(
            seq: 7, id: EventID(origin: origin, sequence: 300),
            hlc: HLCTimestamp(physical: CoreFixtures.epoch, logical: 9),
            base: HLCTimestamp(physical: CoreFixtures.epoch - 5, logical: 0), collection: "notes", item: "n/1 ✓",
            operation: operation, fields: fields, schema: 65_535)
    }

    // MARK: Values

    @Test(arguments: CoreFixtures.allValues.keys.sorted())
    func everyValueKindRoundTrips(name: String) throws {
        let value = CoreFixtures.allValues[name]!
        var writer = ByteWriter()
        writer.write(value)
        let decoded = try writer.bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            let value = try reader.readValue()
            #expect(reader.isAtEnd)
            return value
        }
        #expect(decoded == value)
        #expect(decoded.kindName == value.kindName)
        // String equality is canonical equivalence; the bytes must survive exactly.
        if let text = value.stringValue { #expect(Array(decoded.stringValue!.utf8) == Array(text.utf8)) }
        // -0.0 == 0.0, so compare bit patterns.
        if case .double(let number) = value, case .double(let back) = decoded {
            #expect(back.bitPattern == number.bitPattern)
        }
    }

    @Test func valueBytesFollowTheDocumentedTags() {
        func encode(_ value: Value) -> [UInt8] {
            var writer = ByteWriter()
            writer.write(value)
            return writer.bytes
        }
        #expect(encode(.null) == [0])
        #expect(encode(false) == [1])
        #expect(encode(true) == [2])
        #expect(encode(0) == [3, 0])
        #expect(encode(-1) == [3, 1], "zigzag")
        #expect(encode(1) == [3, 2])
        #expect(encode(64) == [3, 0x80, 0x01], "LEB128")
        #expect(encode(1.0) == [4, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0], "IEEE 754, big-endian")
        #expect(encode("hé") == [5, 3, 0x68, 0xC3, 0xA9])
        #expect(encode([true, nil]) == [6, 2, 2, 0])
        #expect(encode(["b": 1, "a": 2]) == [7, 2, 1, 0x61, 3, 4, 1, 0x62, 3, 2], "object keys in byte order")
    }

    // MARK: Events

    @Test(arguments: EventOperation.allCases)
    func everyOperationRoundTrips(operation: EventOperation) throws {
        let event = EventCodecTests.event(operation, fields: operation == .delete ? [:] : CoreFixtures.allValues)
        let bytes = event.encoded()
        let decoded = try Event(decoding: bytes, seq: 7)
        #expect(decoded == event)
        #expect(decoded.encoded() == bytes)
        #expect(try Event(decoding: bytes, seq: 99).seq == 99, "the seq comes from the key, not the value")
    }

    @Test func theEncodingIsDeterministicWhateverTheDictionaryOrder() {
        var forward: [String: Value] = [:]
        var backward: [String: Value] = [:]
        let names = (0..<40).map { "field\($0)" } + ["Z", "a", "é", "동"]
        for name in names { forward[name] = .string(name) }
        for name in names.reversed() { backward[name] = .string(name) }
        var nested: [String: Value] = [:]
        for name in names.shuffled() { nested[name] = .object(forward) }
        #expect(
            EventCodecTests.event(.put, fields: forward).encoded()
                == EventCodecTests.event(.put, fields: backward).encoded())
        #expect(
            EventCodecTests.event(.patch, fields: ["o": .object(forward)]).encoded()
                == EventCodecTests.event(.patch, fields: ["o": .object(backward)]).encoded())
    }

    /// Pins the stored layout: a change here breaks every existing store.
    @Test func eventBytesFollowTheDocumentedLayout() {
        let event = Event(
            id: EventID(origin: ReplicaID(high: 1, low: 2), sequence: 3), hlc: HLCTimestamp(rawValue: 0x0102),
            base: .zero, collection: "c", item: "i", operation: .put, fields: ["a": -1], schema: 5)
        let expected: [UInt8] =
            [1, 1, 5]  // format, operation, schema
            + [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]  // origin
            + [3]  // origin sequence
            + [0, 0, 0, 0, 0, 0, 1, 2] + [0, 0, 0, 0, 0, 0, 0, 0]  // hlc, base
            + [1, 0x63, 1, 0x69]  // collection, item
            + [1, 1, 0x61, 3, 1]  // one field: "a" = int -1
        #expect(event.encoded() == expected)
    }

    @Test func everyTruncationIsACorruptError() throws {
        let bytes = EventCodecTests.event(.put, fields: CoreFixtures.allValues).encoded()
        for length in 0..<bytes.count {
            do {
                _ = try Event(decoding: Array(bytes.prefix(length)), seq: 1)
                Issue.record("a prefix of \(length) of \(bytes.count) bytes decoded")
            } catch let error as EventStoreError {
                #expect(error.code == .corrupt, "prefix \(length): \(error)")
            }
        }
    }

    @Test func malformedBytesAreErrorsNotCrashes() async throws {
        let bytes = EventCodecTests.event(.patch, fields: ["a": 1]).encoded()
        await expectStoreError(.corrupt, "trailing byte") { _ = try Event(decoding: bytes + [0], seq: 1) }
        var operation = bytes
        operation[1] = 9
        await expectStoreError(.corrupt, "unknown operation") { _ = try Event(decoding: operation, seq: 1) }
        var format = bytes
        format[0] = 0
        await expectStoreError(.corrupt, "format 0") { _ = try Event(decoding: format, seq: 1) }
        format[0] = 3
        await expectStoreError(.unsupportedFormat, "a newer format") { _ = try Event(decoding: format, seq: 1) }
        // Format 2 carries updates after the fields: none there is a corrupt event.
        format[0] = 2
        await expectStoreError(.corrupt, "format 2 without updates") { _ = try Event(decoding: format, seq: 1) }
        var tag = bytes
        tag[tag.count - 2] = 42  // the value tag of field "a"
        await expectStoreError(.corrupt, "unknown value tag") { _ = try Event(decoding: tag, seq: 1) }
        // A count claiming more entries than the bytes could hold is refused before allocating.
        var count = Array(bytes.prefix(bytes.count - 5))
        count += [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        await expectStoreError(.corrupt, "huge field count") { _ = try Event(decoding: count, seq: 1) }
        // Invalid UTF-8 in a name.
        let broken = Event(
            id: EventID(origin: .random(), sequence: 1), hlc: HLCTimestamp(rawValue: 1), collection: "c", item: "i",
            operation: .delete
        ).encoded()
        var utf8 = broken
        utf8[utf8.count - 2] = 0xFF  // the item's one byte
        await expectStoreError(.corrupt, "invalid UTF-8") { _ = try Event(decoding: utf8, seq: 1) }
        // Random bytes never crash.
        var random = SeededGenerator(seed: 99)
        for _ in 0..<2_000 {
            let length = Int(random.next() % 64)
            let noise = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = try? Event(decoding: [1] + noise, seq: 1)
        }
    }

    @Test func valuesNestedTooDeeplyAreRefusedWhenDecoding() async {
        var deep = Value.int(1)
        for _ in 0..<70 { deep = .array([deep]) }
        var writer = ByteWriter()
        writer.write(deep)
        await expectStoreError(.corrupt) {
            _ = try writer.bytes.withUnsafeBytes { buffer in
                var reader = ByteReader(buffer)
                return try reader.readValue()
            }
        }
    }

    // MARK: Item states

    @Test func itemStatesRoundTripByteForByte() throws {
        for seed in UInt64(1)...200 {
            let events = CoreFixtures.randomHistory(seed: seed, origins: 3, events: 15)
            var state = ItemState()
            for event in events { state.apply(event) }
            let bytes = state.encoded()
            let decoded = try bytes.withUnsafeBytes { try ItemState(decoding: $0) }
            #expect(decoded == state, "seed \(seed)")
            #expect(decoded.encoded() == bytes, "seed \(seed)")
        }
        let empty = ItemState()
        #expect(try empty.encoded().withUnsafeBytes { try ItemState(decoding: $0) } == empty)
    }

    @Test func aReaderDecodesOnlyTheFieldsItAsksFor() throws {
        for seed in UInt64(1)...100 {
            let events = CoreFixtures.randomHistory(seed: seed, origins: 3, events: 15)
            var state = ItemState()
            for event in events { state.apply(event) }
            let record = ItemRecord(state: state, searchDocument: 3).encoded()
            let all = try record.withUnsafeBytes { try ItemValues(decodingRecord: $0) }
            for wanted in [Set<String>(), ["title"], ["title", "tags", "nope"], Set(all.fields.keys)] {
                let some = try record.withUnsafeBytes { try ItemValues(decodingRecord: $0, only: wanted) }
                #expect(some.fields == all.fields.filter { wanted.contains($0.key) }, "seed \(seed)")
                #expect(some.exists == all.exists && some.version == all.version, "seed \(seed)")
            }
        }
    }

    // MARK: JSON

    @Test func valuesRoundTripThroughJSON() throws {
        var values = CoreFixtures.allValues
        values["negative zero"] = nil  // JSON writes -0.0 as 0, a whole number
        values["tiny"] = nil
        let data = try JSONEncoder().encode(Value.object(values))
        let decoded = try JSONDecoder().decode(Value.self, from: data)
        #expect(decoded == .object(values))
        #expect(try JSONDecoder().decode(Value.self, from: Data("[1, 1.5, true, null]".utf8)) == [1, 1.5, true, nil])
        #expect(
            try JSONDecoder().decode(Value.self, from: Data("9007199254740993".utf8)) == .int(9_007_199_254_740_993),
            "ints stay exact")
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        #expect(
            String(decoding: try sorted.encode(Value.object(["b": 1, "a": "x", "c": [1.5, nil]])), as: UTF8.self)
                == #"{"a":"x","b":1,"c":[1.5,null]}"#)
    }
}
