import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// The model encoder gives the values the JSON round trip gives (`JSONEncoder`, then `Value`'s
/// JSON decoding): a model is stored the same whichever way it is encoded.
struct ModelEncoderTests {
    typealias Everything = ModelDecoderTests.Everything

    /// What the JSON round trip makes of `value`, or `nil` when `JSONEncoder` refuses it.
    static func viaJSON<T: Encodable>(_ value: T) -> Value? {
        guard let data = try? JSONEncoder().encode(value) else { return nil }
        return try? JSONDecoder().decode(Value.self, from: data)
    }

    static func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = viaJSON(value)
        let encoded = try? ModelEncoder.encode(value)
        #expect(encoded == expected, "\(value)", sourceLocation: sourceLocation)
    }

    @Test func everyKindOfPropertyEncodesAsThroughJSON() throws {
        Self.expectSame(ModelDecoderTests.sample)
        let fields = try ModelCoding.fields(of: ModelDecoderTests.sample)
        var withID = fields
        withID["id"] = "e1"
        #expect(
            try ModelDecoder.decode(Everything.self, from: ModelDecoder.Object(fields: withID))
                == ModelDecoderTests.sample)
    }

    @Test func numbersOfEveryKindEncodeAsThroughJSON() throws {
        let doubles: [Double] = [
            3, -0.0, 0.5, 1e15, 1e16, 9_007_199_254_740_992, 9_007_199_254_740_994, 1e18, 9.2e18, 9.3e18, 1e19, 1e20,
            123_456_789_012_345.6, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            0.1, -2.5,
        ]
        for number in doubles {
            Self.expectSame(number)
            Self.expectSame([number])
            Self.expectSame(Value.double(number))
        }
        for number: Float in [0.1, 3, 1e10, 16_777_216, 1e20, 3.4e38, 1e-7, -0.0, .leastNonzeroMagnitude] {
            Self.expectSame(number)
        }
        for number: UInt64 in [0, 5, UInt64(Int64.max)] { Self.expectSame(number) }
        // Numbers are stored as 64-bit signed integers or doubles: a larger unsigned one is
        // refused, never rounded (JSON's round trip makes it a double).
        for number: UInt64 in [UInt64(Int64.max) + 1, .max] {
            #expect(throws: EncodingError.self) { try ModelEncoder.encode(number) }
            #expect(throws: EncodingError.self) { try ModelEncoder.encode(["n": number]) }
            #expect(throws: EncodingError.self) { try ModelEncoder.encode([number]) }
        }
        for number: Int8 in [.min, -1, .max] { Self.expectSame(number) }
        for text in ["1.25", "100", "-0.5", "12345678901234567", "0", "0.1", "19.99", "1e30"] {
            Self.expectSame(Decimal(string: text)!)
            #expect(try ModelDecoder.decimal(ModelEncoder.encode(Decimal(string: text)!)) == Decimal(string: text)!)
        }
        // A Decimal that a stored number would round (JSON's round trip rounds it) is refused.
        for decimal in [
            Decimal(string: "123456789012345678901234567890")!, Decimal(string: "0.12345678901234567891")!,
            Decimal(string: "1234567890.123456789")!, Decimal.nan,
        ] {
            #expect(throws: EncodingError.self) { try ModelEncoder.encode(decimal) }
            #expect(throws: EncodingError.self) { try ModelEncoder.encode(["amount": decimal]) }
        }
        for seconds in [0, 5, -1.5, 812_345_678.25] { Self.expectSame(Date(timeIntervalSinceReferenceDate: seconds)) }
    }

    @Test func scalarsEncodeAsThroughJSON() throws {
        func viaJSON<V: Encodable>(_ value: V) throws -> Value {
            try JSONDecoder().decode(Value.self, from: try JSONEncoder().encode(value))
        }
        for string in ["", "a", "ünï", "1", "null"] { #expect(try ModelCoding.value(of: string) == viaJSON(string)) }
        for flag in [true, false] { #expect(try ModelCoding.value(of: flag) == viaJSON(flag)) }
        for number in [0, -1, Int.max, Int.min] { #expect(try ModelCoding.value(of: number) == viaJSON(number)) }
        for number in [Int64.max, -7] { #expect(try ModelCoding.value(of: number) == viaJSON(number)) }
        for number in [Int32.min, 9] { #expect(try ModelCoding.value(of: number) == viaJSON(number)) }
        #expect(try ModelCoding.value(of: 3.0) == .int(3))
    }

    /// A subclass that encodes its superclass with `superEncoder()` (the standard pattern), with
    /// no `super` case in its keys.
    class Base: Codable {
        var title = "base"
    }
    final class Derived: Base, @unchecked Sendable {
        var extra = 2
        enum Keys: String, CodingKey { case extra }
        override init() { super.init() }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            extra = try container.decode(Int.self, forKey: .extra)
            try super.init(from: container.superDecoder())
        }
        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(extra, forKey: .extra)
            try super.encode(to: container.superEncoder())
        }
    }

    @Test func aSuperclassEncodesUnderSuperAsThroughJSON() throws {
        Self.expectSame(Derived())
        #expect(try ModelEncoder.encode(Derived()) == .object(["extra": 2, "super": .object(["title": "base"])]))
    }

    @Test func whatJSONRefusesIsRefused() {
        for number in [Double.nan, .infinity, -.infinity] {
            #expect(Self.viaJSON(number) == nil)
            #expect(throws: EncodingError.self) { try ModelEncoder.encode(number) }
            #expect(throws: EncodingError.self) { try ModelEncoder.encode(["a": number]) }
        }
        #expect(throws: EncodingError.self) { try ModelEncoder.encode(Float.nan) }
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(Self.viaJSON(Nothing()) == nil)
        #expect(throws: EncodingError.self) { try ModelEncoder.encode(Nothing()) }
        // Nested, it is an empty object, as in JSON.
        Self.expectSame(["x": Nothing()])
        #expect(throws: EventStoreError.self) { try ModelCoding.value(of: Double.nan) }
    }

    @Test func containersOfEveryShapeEncodeAsThroughJSON() {
        struct Custom: Encodable {
            enum Keys: String, CodingKey { case a, b, c, d }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encodeNil(forKey: .a)
                var nested = container.nestedUnkeyedContainer(forKey: .b)
                try nested.encode(1.5)
                try nested.encodeNil()
                var inner = nested.nestedContainer(keyedBy: Keys.self)
                try inner.encode("x", forKey: .c)
                try container.encode(UInt8(7), forKey: .c)
                try container.encodeIfPresent(nil as Int?, forKey: .d)
            }
        }
        struct Optionals: Encodable {
            var a: Int?
            var b: [String?]
        }
        enum Shape: Codable, Equatable {
            case circle(radius: Double)
            case labelled(String, Int?)
            case empty
        }
        for shape: Shape in [.circle(radius: 2), .circle(radius: 0.5), .labelled("x", nil), .labelled("y", 3), .empty] {
            Self.expectSame(["shape": shape])
            let encoded = try? ModelEncoder.encode(["shape": shape])
            let decoded = try? ModelDecoder.decode(
                [String: Shape].self, from: ModelDecoder.Object(fields: encoded?.objectValue ?? [:]))
            #expect(decoded == ["shape": shape])
        }
        Self.expectSame(Custom())
        Self.expectSame(Optionals(a: nil, b: ["x", nil]))
        Self.expectSame(Optionals(a: 4, b: []))
        Self.expectSame([true: 1, false: 2])
        Self.expectSame([1: "one", -2: "minus two"])
        Self.expectSame(["k": [["n": 1.0]]])
        Self.expectSame([[Int]]([[1, 2], [], [3]]))
        Self.expectSame(Value.object(["deep": .array([.double(2.0), .double(2.5), .null, .string("s")])]))
    }

    @Test func randomModelsEncodeAsThroughJSONAndDecodeBack() throws {
        var random = SeededGenerator(seed: 0xC0DE)
        func double() -> Double {
            [0.0, 1.0, -2.5, 1e20, 0.1, Double(Int.random(in: -1000...1000, using: &random)) / 8].randomElement(
                using: &random)!
        }
        for number in 0..<500 {
            var model = ModelDecoderTests.sample
            model.id = "m\(number)"
            model.title = String(repeating: "é", count: Int.random(in: 0...3, using: &random))
            model.count = Int.random(in: Int.min...Int.max, using: &random)
            model.small = Int8.random(in: .min ... .max, using: &random)
            model.unsigned = UInt16.random(in: .min ... .max, using: &random)
            model.big = Int64.random(in: .min ... .max, using: &random)
            model.ratio = double()
            model.single = Float(double())
            model.done = Bool.random(using: &random)
            model.due = Date(timeIntervalSinceReferenceDate: double())
            model.blob = Data(
                (0..<Int.random(in: 0...5, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            model.amount = Decimal(Int.random(in: -10_000...10_000, using: &random)) / 100
            model.tags = (0..<Int.random(in: 0...3, using: &random)).map { "t\($0)" }
            model.maybe = Bool.random(using: &random) ? nil : "m"
            model.maybeNumbers = [nil, Int.random(in: -5...5, using: &random)]
            // (A whole double in a `Value` reads back as an integer, through JSON as here.)
            model.extra = .array([
                .double(Double(Int.random(in: -99...99, using: &random)) + 0.5),
                .int(Int64.random(in: -9...9, using: &random)),
            ])
            model.matrix = [[double(), double()], []]
            Self.expectSame(model)
            var fields = try ModelCoding.fields(of: model)
            fields["id"] = .string(model.id)
            #expect(try ModelDecoder.decode(Everything.self, from: ModelDecoder.Object(fields: fields)) == model)
        }
    }
}
