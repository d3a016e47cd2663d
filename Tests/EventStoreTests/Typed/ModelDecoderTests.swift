import EventStoreTestSupport
import Foundation
import Testing

@testable import EventStore

/// The model decoder reads models as `JSONDecoder` reads the JSON form of the same fields:
/// the same models, and the same errors at the same coding paths (a number out of range aside,
/// whose path only the model decoder gives).
struct ModelDecoderTests {
    enum Priority: String, Codable, Equatable { case low, high }
    enum Level: Int, Codable, Equatable { case one = 1, two = 2 }

    struct Inner: Codable, Equatable {
        var at: Int64
        var label: String?
    }

    /// A model with one property of every kind a model can hold.
    struct Everything: Codable, Identifiable, Equatable {
        var id: String
        var title: String
        var count: Int
        var small: Int8
        var unsigned: UInt16
        var big: Int64
        var ratio: Double
        var single: Float
        var done: Bool
        var due: Date
        var blob: Data
        var link: URL
        var amount: Decimal
        var token: UUID
        var tags: [String]
        var byNumber: [Int: String]
        var inner: Inner
        var inners: [Inner]
        var maybe: String?
        var maybeNumbers: [Int?]
        var priority: Priority
        var level: Level
        var extra: Value
        var matrix: [[Double]]
    }

    static let sample = Everything(
        id: "e1", title: "Groceries", count: -42, small: 7, unsigned: 65_000, big: Int64.max, ratio: 0.1, single: 0.1,
        done: true, due: Date(timeIntervalSinceReferenceDate: 812_345_678.25), blob: Data([0, 1, 2, 254, 255]),
        link: URL(string: "https://example.org/a?b=c")!, amount: Decimal(string: "12.75")!,
        token: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, tags: ["home", "ünïcødé"],
        byNumber: [1: "one", 20: "twenty"], inner: Inner(at: 5, label: nil),
        inners: [Inner(at: 1, label: "a"), Inner(at: -2, label: nil)], maybe: nil, maybeNumbers: [1, nil, 3],
        priority: .high, level: .two, extra: .object(["k": .array([.int(1), .double(2.5), .null, .bool(false)])]),
        matrix: [[1, 2.5], [], [-0.0]])

    /// What the JSON round trip makes of `fields` as a `T`.
    static func viaJSON<T: Decodable>(_ type: T.Type, _ fields: [String: Value]) -> Result<T, DecodingError> {
        Result {
            do {
                return try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(Value.object(fields)))
            } catch let error as DecodingError {
                throw error
            }
        }.mapError { $0 as! DecodingError }
    }

    /// What the model decoder makes of `fields` as a `T`.
    static func direct<T: Decodable>(_ type: T.Type, _ fields: [String: Value]) -> Result<T, DecodingError> {
        Result {
            do {
                return try ModelDecoder.decode(T.self, from: ModelDecoder.Object(fields: fields))
            } catch let error as DecodingError {
                throw error
            }
        }.mapError { $0 as! DecodingError }
    }

    /// The case and coding path of a decoding error, which both decoders must agree on.
    ///
    /// - Parameter depth: How many components of the path to compare (the first member that
    ///   fails in an object depends on the order of its keys).
    static func shape(_ error: DecodingError, depth: Int = .max) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.prefix(depth).map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
                .joined(separator: ".")
        }
        switch error {
        // JSONDecoder reports a null Bool as a type mismatch; ours, as every other null, as a
        // value not found.
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong value at \(path(context))"
        case .keyNotFound(let key, let context): return "keyNotFound \(key.stringValue) at \(path(context))"
        // JSONDecoder leaves the path of a number out of range empty; ours names it.
        case .dataCorrupted: return "dataCorrupted"
        @unknown default: return "\(error)"
        }
    }

    /// Both decoders give the same model or errors of the same shape.
    static func expectAgreement<T: Decodable & Equatable>(
        _ type: T.Type, _ fields: [String: Value], depth: Int = .max,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        switch (viaJSON(T.self, fields), direct(T.self, fields)) {
        case (.success(let expected), .success(let model)):
            #expect(model == expected, sourceLocation: sourceLocation)
        case (.failure(let expected), .failure(let error)):
            #expect(
                shape(error, depth: depth) == shape(expected, depth: depth), "\(fields)",
                sourceLocation: sourceLocation)
        case (let expected, let got):
            Issue.record("JSON: \(expected), direct: \(got), fields: \(fields)", sourceLocation: sourceLocation)
        }
    }

    @Test func everyKindOfPropertyReadsAsThroughJSON() throws {
        var fields = try ModelCoding.fields(of: Self.sample)
        fields["id"] = .string("e1")
        let model = try ModelDecoder.decode(Everything.self, from: ModelDecoder.Object(fields: fields))
        #expect(model == Self.sample)
        Self.expectAgreement(Everything.self, fields)
    }

    @Test func numbersOfEveryFormDecodeAsJSONDecoderDecodesThem() {
        struct Numbers: Codable, Equatable {
            var int: Int?
            var small: Int8?
            var unsigned: UInt?
            var double: Double?
            var float: Float?
            var decimal: Decimal?
        }
        let values: [Value] = [
            .int(3), .double(3.0), .double(3.5), .int(-1), .int(300), .int(Int64.min), .int(Int64.max), .double(1e20),
            .double(-0.0), .double(1e300), .double(0.1), .string("3"), .bool(true), .null,
        ]
        for value in values {
            for field in ["int", "small", "unsigned", "double", "float", "decimal"] {
                Self.expectAgreement(Numbers.self, [field: value])
            }
        }
    }

    @Test func missingNullAndMistypedFieldsFailAtTheSamePath() {
        var base: [String: Value] = [:]
        base["title"] = .string("t")
        base["inner"] = .object(["at": .int(1)])
        base["list"] = .array([.object(["at": .int(2)])])
        struct Model: Codable, Equatable {
            var title: String
            var inner: Inner
            var list: [Inner]
            var note: String?
        }
        let cases: [(String, Value?)] = [
            ("title", nil), ("title", .null), ("title", .int(1)), ("inner", .string("x")), ("inner", .null),
            ("inner", .object([:])), ("inner", .object(["at": .string("1")])), ("list", .object([:])),
            ("list", .array([.null])), ("list", .array([.object(["at": .double(1.5)])])), ("note", .int(3)),
            ("note", .null), ("note", .array([])),
        ]
        Self.expectAgreement(Model.self, base)
        for (field, value) in cases {
            var fields = base
            fields[field] = value
            Self.expectAgreement(Model.self, fields)
        }
    }

    @Test func randomValuesInEveryPropertyAgreeWithTheJSONRoundTrip() throws {
        var random = SeededGenerator(seed: 0x5EED)
        func scalar() -> Value {
            switch Int.random(in: 0..<8, using: &random) {
            case 0: .null
            case 1: .bool(Bool.random(using: &random))
            case 2: .int(Int64.random(in: -1000...1000, using: &random))
            case 3: .int(Int64.random(in: Int64.min...Int64.max, using: &random))
            case 4: .double(Double(Int.random(in: -400...400, using: &random)) / 4)
            case 5:
                .string(
                    ["", "a", "AQID", "https://x.org", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"].randomElement(
                        using: &random)!)
            case 6:
                .array(
                    (0..<Int.random(in: 0..<3, using: &random)).map { _ in .int(Int64.random(in: 0...3, using: &random))
                    })
            default: .object(["at": .int(1), "label": .string("x")])
            }
        }
        let base = try ModelCoding.fields(of: Self.sample).merging(["id": .string("e1")]) { $1 }
        let names = Array(base.keys).sorted()
        for _ in 0..<2_000 {
            var fields = base
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let name = names.randomElement(using: &random)!
                fields[name] =
                    Bool.random(using: &random) && Int.random(in: 0..<4, using: &random) == 0 ? nil : scalar()
            }
            Self.expectAgreement(Everything.self, fields, depth: 1)
        }
    }

    @Test func defaultsFillMissingFieldsAndTheIDComesFromTheItem() throws {
        struct Note: Codable, Identifiable, Equatable {
            var id: Int
            var title: String
            var pinned: Bool
        }
        let item = Item(collection: "Note", id: "17", fields: ["title": .string("t")], version: .zero)
        let note: Note = try ModelCoding.model(item, defaults: ["pinned": .bool(true), "title": .string("default")])
        #expect(note == Note(id: 17, title: "t", pinned: true))
        #expect(throws: EventStoreError.self) { let _: Note = try ModelCoding.model(item) }
    }
}
