import EventStore
import EventStoreTestSupport
import EventSync
import Foundation
import Testing

struct EventJSONTests {
    static let origin = ReplicaID(hex: "0123456789abcdef0123456789abcdef")!

    static func sample(fields: [String: Value] = ["title": "Groceries", "rank": 3, "weight": 2.0]) -> Event {
        Event(
            seq: 42, id: EventID(origin: origin, sequence: 7),
            hlc: HLCTimestamp(physical: 1_800_000_000_000, logical: 3),
            base: HLCTimestamp(physical: 1_700_000_000_000, logical: 0), collection: "notes", item: "n1",
            operation: .put, fields: fields, schema: 2)
    }

    // MARK: Canonical form

    @Test func canonicalBytes() throws {
        let event = Self.sample(fields: ["b": 1, "a": 1.0])
        let text = String(decoding: event.jsonBytes(), as: UTF8.self)
        let expected =
            #"{"base":"111411200000000000","collection":"notes","fields":{"a":1.0,"b":1},"hlc":"117964800000000003","#
            + #""id":{"origin":"0123456789abcdef0123456789abcdef","seq":7},"item":"n1","op":"put","schema":2,"seq":42}"#
        #expect(text == expected)
        #expect(event.base.rawValue == 111_411_200_000_000_000)
        #expect(event.hlc.rawValue == 117_964_800_000_000_003)
    }

    @Test func roundTripKeepsIntAndDouble() throws {
        let fields: [String: Value] = [
            "int": 3, "double": 3.0, "negativeZero": .double(-0.0), "big": .int(.max), "small": .int(.min),
            "exp": 1e300, "tiny": .double(.leastNonzeroMagnitude),
            "text": "line\nbreak \"quoted\" \\ tab\t \u{1} 동기화 🎉", "null": .null,
            "flag": true, "list": [1, 2.5, "x", [true]], "object": ["inner": ["deep": 1]],
        ]
        let event = Self.sample(fields: fields)
        let decoded = try Event(json: event.jsonBytes())
        #expect(decoded == event)
        #expect(decoded.fields["int"] == .int(3))
        #expect(decoded.fields["double"] == .double(3.0))
        #expect(decoded.fields["negativeZero"]?.doubleValue?.sign == .minus)
        #expect(decoded.jsonBytes() == event.jsonBytes())
    }

    @Test func hlcIsADecimalString() throws {
        let event = Self.sample()
        guard case .object(let object) = try Value(json: event.jsonBytes()) else {
            Issue.record("not an object")
            return
        }
        #expect(object["hlc"] == .string(String(event.hlc.rawValue)))
        #expect(object["base"] == .string(String(event.base.rawValue)))
    }

    @Test func codableFormMatches() throws {
        let event = Self.sample(fields: ["title": "x", "rank": 3])
        let encoded = try JSONEncoder().encode(event)
        let decoded = try JSONDecoder().decode(Event.self, from: encoded)
        #expect(decoded == event)
        let fast = try Event(json: Array(encoded))
        #expect(fast == event)
    }

    @Test func valueParsing() throws {
        #expect(try Value(json: Array("12".utf8)) == .int(12))
        #expect(try Value(json: Array("-12.5e1".utf8)) == .double(-125))
        #expect(try Value(json: Array("1E2".utf8)) == .double(100))
        #expect(try Value(json: Array("99999999999999999999.0".utf8)) == .double(1e20))
        #expect(try Value(json: Array("-0".utf8)) == .int(0))
        #expect(try Value(json: Array(#""\u00e9\ud83c\udf89""#.utf8)) == .string("é🎉"))
        #expect(try Value(json: Array(" [ ] ".utf8)) == .array([]))
    }

    // MARK: Malformed input

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "tru", "\"abc", "{\"a\" 1}", "[1 2]", "{\"a\":1}x",
        "\"\\x\"", "\"\\ud800\"", "\"\u{1}\"", "{\"a\":1,\"a\":2}", "1e999", "NaN", "[1]]",
    ])
    func malformedJSONIsRefused(text: String) {
        #expect(throws: JSONSyntaxError.self) { try Value(json: Array(text.utf8)) }
    }

    // MARK: Integers beyond 64 bits

    @Test func integersKeepTheirFull64BitRange() throws {
        #expect(try Value(json: Array("9223372036854775807".utf8)) == .int(.max))
        #expect(try Value(json: Array("-9223372036854775808".utf8)) == .int(.min))
        #expect(
            try Value(json: Array("[0, -1, 10, 1844674407370955161]".utf8)) == [0, -1, 10, 1_844_674_407_370_955_161])
        // Written with a fraction or an exponent, a number of any size is a double.
        #expect(try Value(json: Array("9223372036854775808.0".utf8)) == .double(9_223_372_036_854_775_808.0))
        #expect(try Value(json: Array("1e20".utf8)) == .double(1e20))
    }

    @Test(arguments: [
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999",
        "100000000000000000000000000000000000000000000000000",
    ])
    func integersBeyond64BitsAreRefused(text: String) {
        let error = #expect(throws: JSONSyntaxError.self) { try Value(json: Array(text.utf8)) }
        #expect(error?.message.hasPrefix("integer \(text.prefix(40))") == true, "\(String(describing: error))")
        #expect(error?.message.hasSuffix("does not fit in 64 bits") == true, "\(String(describing: error))")
        #expect(error?.offset == 0)
    }

    @Test func errorsNameWhereTheyAre() {
        let cases: [(json: String, path: String, description: String)] = [
            (
                #"{"fields":{"a":[1,{"b":99999999999999999999}]}}"#, "fields.a[1].b",
                "integer 99999999999999999999 does not fit in 64 bits at fields.a[1].b (byte 23)"
            ),
            (#"{"odd key":[1e999]}"#, #"["odd key"][0]"#, #"number 1e999 is out of range at ["odd key"][0] (byte 12)"#),
            (#"[[1,2],[3,"x]]"#, "[1][1]", "unterminated string at [1][1] (byte 10)"),
            (#"{"a":1,"a":2}"#, "", "duplicate object key \"a\" at byte 7"),
        ]
        for (json, path, description) in cases {
            let error = #expect(throws: JSONSyntaxError.self) { try Value(json: Array(json.utf8)) }
            #expect(error?.path == path, "\(json)")
            #expect(error?.description == description, "\(json)")
        }
    }

    // MARK: Unknown keys

    /// A complete event with its required members only, then `tail` (which closes the object).
    static func minimalEvent(id: String = #"{"origin":"0123456789abcdef0123456789abcdef","seq":1}"#, _ tail: String)
        -> String
    {
        #"{"collection":"notes","hlc":"1","id":\#(id),"item":"n1","op":"put"\#(tail)"#
    }

    @Test func theMinimalEventDecodes() throws {
        #expect(try Event(json: Array(Self.minimalEvent("}").utf8)).item == "n1")
    }

    @Test(arguments: [
        (minimalEvent(#","feilds":{"title":"x"}}"#), #"not an event: unknown key "feilds""#),
        (minimalEvent(#","fields":{},"Seq":3}"#), #"not an event: unknown key "Seq""#),
        (minimalEvent(#","zz":1,"aa":2}"#), #"not an event: unknown key "aa""#),
        (#"{"colection":"notes","hlc":"1","item":"n1","op":"put"}"#, #"not an event: unknown key "colection""#),
        (
            minimalEvent(id: #"{"origin":"0123456789abcdef0123456789abcdef","seq":1,"replica":"x"}"#, "}"),
            #"not an event: unknown key "id.replica""#
        ),
    ])
    func unknownEventKeysAreRefused(json: String, message: String) {
        let error = #expect(throws: EventStoreError.self) { try Event(json: Array(json.utf8)) }
        #expect(error?.code == .invalidEvent)
        #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error))")
    }

    @Test func aPushBodyWithAnUnknownKeyOrAHugeIntegerIsMalformed() throws {
        let event = Self.sample()
        let body = PushRequest(replica: Self.origin, events: [event]).jsonBytes()
        #expect(try PushRequest(json: body).events == [event])
        let text = String(decoding: body, as: UTF8.self)
        let cases: [(body: String, detail: String)] = [
            (
                text.replacingOccurrences(of: #"{"events":"#, with: #"{"evnets":[],"events":"#),
                #"push body: unknown key "evnets""#
            ),
            (
                text.replacingOccurrences(of: #""item":"n1""#, with: #""item":"n1","itme":"n2""#),
                #"events[0]: not an event: unknown key "itme""#
            ),
            (
                text.replacingOccurrences(of: #""rank":3"#, with: #""rank":36893488147419103232"#),
                "push body is not valid JSON: integer 36893488147419103232 does not fit in 64 bits at events[0].fields.rank"
            ),
            (
                text.replacingOccurrences(of: #"{"events":"#, with: #"{"clock":"18446744073709551616","events":"#),
                #"push body: "clock" must be a stamp"#
            ),
            (
                text.replacingOccurrences(of: #"{"events":"#, with: #"{"clock":7,"events":"#),
                #"push body: "clock" must be a stamp"#
            ),
            (
                text.replacingOccurrences(of: #"{"events":"#, with: #"{"clock":"+7","events":"#),
                #"push body: "clock" must be a stamp"#
            ),
        ]
        for (bad, detail) in cases {
            #expect(bad != text)
            let error = #expect(throws: SyncError.self) { try PushRequest(json: Array(bad.utf8)) }
            #expect(error?.code == .malformedBody)
            #expect(error?.message.hasPrefix(detail) == true, "\(String(describing: error))")
        }
    }

    /// Strings without escapes and with them (read by different paths), invalid in ways whose
    /// repair keeps the length (a truncated 4-byte sequence before ASCII) or does not.
    @Test(
        arguments: [
            [0xFF, 0xFE], [0xF0, 0x9F, 0x98, 0x41], [0xED, 0xA0, 0x80], [0x5C, 0x6E, 0xF0, 0x9F, 0x98, 0x41],
            [0x5C, 0x22, 0xC0, 0xAF],
        ] as [[UInt8]])
    func invalidUTF8IsRefused(content: [UInt8]) {
        #expect(throws: JSONSyntaxError.self) { try Value(json: [0x22] + content + [0x22]) }
    }

    @Test func validUTF8IsKept() throws {
        #expect(try Value(json: Array(#""한국어 😀""#.utf8)) == .string("한국어 😀"))
        #expect(try Value(json: Array(#""a\n한국어 😀""#.utf8)) == .string("a\n한국어 😀"))
    }

    @Test func depthIsLimited() throws {
        func nested(_ depth: Int) -> [UInt8] {
            Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
        }
        _ = try Value(json: nested(32))
        #expect(throws: JSONSyntaxError.self) { try Value(json: nested(33)) }
        // Hostile depth does not exhaust the stack.
        #expect(throws: JSONSyntaxError.self) { try Value(json: nested(200_000)) }

        // An event's field value may nest 32 levels, not 33.
        func event(depth: Int) -> [UInt8] {
            var value: Value = 1
            for _ in 0..<depth { value = .array([value]) }
            return Self.sample(fields: ["deep": value]).jsonBytes()
        }
        _ = try Event(json: event(depth: 32))
        #expect(throws: JSONSyntaxError.self) { try Event(json: event(depth: 33)) }
    }

    @Test(arguments: [
        #"[]"#,
        #"{"hlc":"1","collection":"c","item":"i","op":"put"}"#,
        #"{"id":{"origin":"zz","seq":1},"hlc":"1","collection":"c","item":"i","op":"put"}"#,
        #"{"id":{"origin":"0123456789abcdef0123456789abcdef","seq":1},"hlc":"x","collection":"c","item":"i","op":"put"}"#,
        #"{"id":{"origin":"0123456789abcdef0123456789abcdef","seq":1},"hlc":"1","collection":"c","item":"i","op":"upsert"}"#,
        #"{"id":{"origin":"0123456789abcdef0123456789abcdef","seq":-1},"hlc":"1","collection":"c","item":"i","op":"put"}"#,
        #"{"id":{"origin":"0123456789abcdef0123456789abcdef","seq":1},"hlc":"1","collection":"c","item":"i","op":"put","fields":[]}"#,
        #"{"id":{"origin":"0123456789abcdef0123456789abcdef","seq":1},"hlc":"1","collection":3,"item":"i","op":"put"}"#,
    ])
    func notAnEventIsRefused(text: String) {
        #expect(throws: EventStoreError.self) { try Event(json: Array(text.utf8)) }
    }

    @Test func eventsFromAStoreRoundTrip() async throws {
        try await withTemporaryStore { store in
            try await store.append([
                .put("notes", id: "a", fields: ["title": "Hello", "tags": ["x", "y"], "score": 1.5]),
                .patch("notes", id: "a", fields: ["title": "Hi"]), .delete("notes", id: "a"),
            ])
            try store.read { reader in
                try reader.forEachEvent { event in
                    let decoded = try Event(json: event.jsonBytes())
                    #expect(decoded == event)
                    return true
                }
            }
        }
    }
}
