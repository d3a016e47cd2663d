import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// Events with updates of add-wins sets and counters, and item states that hold them: lossless
/// in binary and JSON, pinned to the documented layout, refused when malformed; events without
/// updates keep the bytes they always had.
struct FieldUpdateCodecTests {
    static let seen = [
        EventID(origin: ReplicaID(high: 1, low: 2), sequence: 3),
        EventID(origin: ReplicaID(high: 4, low: 5), sequence: 600),
    ]

    static func event(_ operation: EventOperation = .patch) -> Event {
        var event = EventCodecTests.event(operation, fields: operation == .delete ? [:] : ["title": "t"])
        event.updates = [
            "tags": FieldUpdate(add: ["work", 7, ["nested": true]], remove: [.init(element: "draft", seen: seen)]),
            "views": .increment(-42),
            "again": FieldUpdate(),
        ]
        return event
    }

    @Test(arguments: [EventOperation.put, .patch, .delete])
    func eventsWithUpdatesRoundTripInBinaryAndJSON(operation: EventOperation) throws {
        let event = Self.event(operation)
        let bytes = event.encoded()
        #expect(bytes[0] == 2, "an event with updates is format 2")
        #expect(try Event(decoding: bytes, seq: event.seq) == event)
        let json = event.jsonBytes()
        #expect(try Event(json: json) == event)
        #expect(try Event(json: json).jsonBytes() == json)
        #expect(try JSONDecoder().decode(Event.self, from: JSONEncoder().encode(event)) == event)
        // The layout of the tail: one counter update, read back from its documented place.
        var plain = event
        plain.updates = [:]
        #expect(plain.encoded()[0] == 1, "without updates: format 1, as before")
        #expect(Array(bytes.dropFirst()).starts(with: Array(plain.encoded().dropFirst())))
    }

    @Test func theJSONFormIsTheDocumentedOne() throws {
        let json = String(decoding: Self.event().jsonBytes(), as: UTF8.self)
        #expect(
            json.hasSuffix(
                #","seq":7,"updates":{"again":{"add":[]},"tags":{"add":["work",7,{"nested":true}],"remove":[{"element":"draft","#
                    + #""seen":["00000000000000010000000000000002/3","00000000000000040000000000000005/600"]}]},"#
                    + #""views":{"increment":-42}}}"#), "\(json)")
    }

    @Test func everyTruncationIsACorruptError() {
        let bytes = Self.event().encoded()
        for length in 0..<bytes.count {
            #expect(throws: EventStoreError.self, "prefix \(length)") {
                try Event(decoding: Array(bytes.prefix(length)), seq: 1)
            }
        }
        // An unknown update kind: the byte before a lone counter update's increment.
        var counter = EventCodecTests.event(.patch, fields: [:])
        counter.updates = ["views": .increment(5)]
        var kind = counter.encoded()
        #expect(kind[kind.count - 2] == 1)
        kind[kind.count - 2] = 9
        #expect(throws: EventStoreError.self) { try Event(decoding: kind, seq: 1) }
    }

    @Test(arguments: [
        #"{"tags":{"add":["a"],"increment":1}}"#, #"{"tags":{"increment":1.5}}"#, #"{"tags":{"ad":["a"]}}"#,
        #"{"tags":{}}"#, #"{"tags":{"remove":[{"element":"a"}]}}"#,
        #"{"tags":{"remove":[{"element":"a","seen":["x/1"]}]}}"#,
        #"{"tags":{"remove":[{"element":"a","seen":[],"extra":1}]}}"#, #"{"tags":[]}"#, #"[]"#,
        #"{"tags":{"remove":[{"element":"a","seen":["00000000000000010000000000000002/01"]}]}}"#,
        #"{"tags":{"remove":[{"element":"a","seen":["00000000000000010000000000000002/12345678901234567890"]}]}}"#,
        #"{"tags":{"remove":[{"element":"a","seen":["0000000000000001000000000000002/1"]}]}}"#,
    ])
    func malformedJSONUpdatesAreRefusedByName(updates: String) throws {
        var json = String(decoding: EventCodecTests.event(.patch, fields: ["a": 1]).jsonBytes(), as: UTF8.self)
        json.removeLast()
        json += #","updates":"# + updates + "}"
        #expect {
            try Event(json: Array(json.utf8))
        } throws: { error in
            (error as? EventStoreError).map { $0.code == .invalidEvent && $0.message.contains("updates") } ?? false
        }
    }

    @Test func seenIdsMayBeWrittenInEitherCase() throws {
        var json = String(decoding: EventCodecTests.event(.patch, fields: ["a": 1]).jsonBytes(), as: UTF8.self)
        json.removeLast()
        json += #","updates":{"tags":{"remove":[{"element":"a","seen":["00000000000000010000000000000ABC/9"]}]}}}"#
        let event = try Event(json: Array(json.utf8))
        #expect(event.updates["tags"]?.remove.first?.seen.first?.description == "00000000000000010000000000000abc/9")
    }

    @Test func itemStatesWithSetsAndCountersRoundTripByteForByte() throws {
        var state = ItemState()
        let events = (1...6).map { sequence in
            var event = EventCodecTests.event(.patch, fields: ["title": .string("v\(sequence)")])
            event.id.sequence = UInt64(sequence)
            event.hlc = HLCTimestamp(physical: CoreFixtures.epoch + UInt64(sequence), logical: 0)
            event.updates = Self.event().updates
            event.updates["tags"]?.remove[0].seen = [
                EventID(origin: event.id.origin, sequence: UInt64(max(1, sequence - 1)))
            ]
            return event
        }
        for event in events { state.apply(event) }
        let bytes = state.encoded()
        #expect(bytes[0] == 2)
        let decoded = try bytes.withUnsafeBytes { try ItemState(decoding: $0) }
        #expect(decoded == state)
        #expect(decoded.encoded() == bytes)
        // A reader's fast path shows the same values.
        let record = ItemRecord(state: state, searchDocument: 9).encoded()
        let values = try record.withUnsafeBytes { try ItemValues(decodingRecord: $0) }
        #expect(values.fields == state.values && values.exists == state.exists)
        for length in 0..<bytes.count {
            #expect(throws: EventStoreError.self) {
                try Array(bytes.prefix(length)).withUnsafeBytes { try ItemState(decoding: $0) }
            }
        }
    }
}
