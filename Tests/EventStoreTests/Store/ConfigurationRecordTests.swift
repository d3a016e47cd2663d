import EventStoreTestSupport
import Testing

@testable import EventStore

/// The record of a store's configuration: a canonical, deterministic encoding whose decoder
/// refuses every malformed input with an error and never traps.
struct ConfigurationRecordTests {
    static func sample() -> ConfigurationRecord {
        var search = SearchConfiguration()
        search.collections["tasks"] = [.init(name: "title", weight: 4), .init(name: "notes", weight: 1)]
        search.collections["archive"] = []
        search.tagField = "labels"
        return ConfigurationRecord(
            search: search, tokenizerVersion: Tokenizer.version,
            projections: [
                ProjectionRecord(name: "zeta", version: -3, databases: ["b", "a"], isStale: true),
                ProjectionRecord(name: "alpha", version: 7, databases: []),
            ])
    }

    static func code(of body: () throws -> Void) -> EventStoreError.Code? {
        do {
            try body()
            return nil
        } catch let error as EventStoreError {
            return error.code
        } catch {
            return nil
        }
    }

    /// A record written field by field: tokenizer 1, tag field `tags`, `defaultFields` in the
    /// order given, no collections, no projections.
    static func raw(defaultFields: [(name: String, weight: UInt64)]) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(ConfigurationRecord.formatVersion)
        writer.write(varint: 1)
        writer.write(string: "tags")
        writer.write(varint: defaultFields.count)
        for field in defaultFields {
            writer.write(string: field.name)
            writer.write(varint: field.weight)
        }
        writer.write(varint: 0)
        writer.write(varint: 0)
        return writer.bytes
    }

    // MARK: Encoding

    @Test func roundTripsAndIsCanonical() throws {
        let record = Self.sample()
        let bytes = record.encoded()
        #expect(try ConfigurationRecord(decoding: bytes) == record)
        #expect(bytes.first == ConfigurationRecord.formatVersion)
        #expect(record.projections.map(\.name) == ["alpha", "zeta"])
        #expect(record.projections[1].databases == ["a", "b"])

        // The order fields are declared in does not change the record.
        var reordered = record.search
        reordered.collections["tasks"] = [.init(name: "notes", weight: 1), .init(name: "title", weight: 4)]
        reordered.defaultFields.reverse()
        let again = ConfigurationRecord(
            search: reordered, tokenizerVersion: record.tokenizerVersion, projections: record.projections.reversed())
        #expect(again.encoded() == bytes)
        #expect(record.search.differences(from: reordered).isEmpty)
    }

    @Test func defaultConfigurationRoundTrips() throws {
        let record = ConfigurationRecord(configuration: Store.Configuration())
        #expect(try ConfigurationRecord(decoding: record.encoded()) == record)
        #expect(record.search == SearchConfiguration().canonical)
        #expect(record.projections.isEmpty)
    }

    @Test func differencesNameWhatChanged() {
        let recorded = Self.sample().search
        var opening = recorded
        opening.collections["tasks"] = nil
        opening.tagField = "tags"
        let differences = recorded.differences(from: opening)
        #expect(differences.count == 2, "\(differences)")
        #expect(differences.contains("tag field: recorded \"labels\", opening \"tags\""))
        #expect(
            differences.contains {
                $0.hasPrefix("collection \"tasks\": recorded notes×1 title×4, opening")
                    && $0.hasSuffix("(the default fields)")
            })
    }

    // MARK: Bad bytes

    @Test func everyTruncationIsCorrupt() {
        let bytes = Self.sample().encoded()
        for count in 0..<bytes.count {
            #expect(
                Self.code { _ = try ConfigurationRecord(decoding: Array(bytes.prefix(count))) } == .corrupt,
                "\(count) bytes")
        }
    }

    @Test func trailingBytesNonCanonicalOrderAndBadValuesAreCorrupt() throws {
        let bytes = Self.sample().encoded()
        #expect(Self.code { _ = try ConfigurationRecord(decoding: bytes + [0]) } == .corrupt)
        #expect(Self.code { _ = try ConfigurationRecord(decoding: [0]) } == .corrupt)

        // Default fields written unsorted: decodes to a valid value but not from canonical bytes.
        #expect(
            Self.code {
                _ = try ConfigurationRecord(decoding: Self.raw(defaultFields: [("title", 3), ("content", 1)]))
            } == .corrupt)
        #expect(
            try ConfigurationRecord(decoding: Self.raw(defaultFields: [("content", 1), ("title", 3)])).search
                .defaultFields.count == 2)
        // A weight outside 1…100.
        #expect(
            Self.code { _ = try ConfigurationRecord(decoding: Self.raw(defaultFields: [("title", 500)])) } == .corrupt)

        // Invalid UTF-8 in the tag field.
        #expect(Self.code { _ = try ConfigurationRecord(decoding: [1, 1, 2, 0xC3, 0x28, 0, 0, 0]) } == .corrupt)
        // A stale flag other than 0 or 1.
        var flags = bytes
        flags[flags.count - 1] = 7
        #expect(Self.code { _ = try ConfigurationRecord(decoding: flags) } == .corrupt)
    }

    @Test func aNewerFormatIsUnsupported() {
        var bytes = Self.sample().encoded()
        bytes[0] = ConfigurationRecord.newestFormatVersion + 1
        #expect(Self.code { _ = try ConfigurationRecord(decoding: bytes) } == .unsupportedFormat)
    }

    @Test func schemasRoundTripAndOnlyARecordWithSchemasUsesFormatThree() throws {
        var record = Self.sample()
        let without = record.encoded()
        #expect(without[0] < ConfigurationRecord.schemaFormatVersion)
        record.schemas = [
            SchemaRecord(collection: "tasks", version: 2),
            SchemaRecord(
                collection: "notes", version: 3,
                upcasters: [
                    2: .custom,
                    0: .steps([
                        .renameField("title", to: "name"), .setDefault("done", false), .removeField("draft"),
                        .mapValues("priority", ["high": 2, "low": 0, 1: "one"], otherwise: 1),
                        .mapValues("size", [:]), .splitField("who", separator: ", ", into: ["first", "last"]),
                        .moveToCollection("archive"),
                    ]),
                ]),
        ]
        record = ConfigurationRecord(
            search: record.search, tokenizerVersion: record.tokenizerVersion, projections: record.projections,
            indexes: record.indexes, schemas: record.schemas)
        let bytes = record.encoded()
        #expect(bytes[0] == ConfigurationRecord.schemaFormatVersion)
        let decoded = try ConfigurationRecord(decoding: bytes)
        #expect(decoded == record)
        #expect(
            decoded.schemas.map(\.collection) == ["notes", "tasks"] && decoded.schemas[0].upcastVersions == [0, 2])
        #expect(decoded.schemas[0].hasCustomUpcasters && decoded.schemas[0].declarative == nil)
        // The same mapping built in another order encodes to the same bytes.
        var reordered = record
        reordered.schemas[0].upcasters[0] = .steps([
            .renameField("title", to: "name"), .setDefault("done", false), .removeField("draft"),
            .mapValues("priority", [1: "one", "low": 0, "high": 2], otherwise: 1),
            .mapValues("size", [:]), .splitField("who", separator: ", ", into: ["first", "last"]),
            .moveToCollection("archive"),
        ])
        #expect(reordered.encoded() == bytes)
        // An upcaster at or above its schema's version cannot be.
        var bad = ConfigurationRecord(
            search: record.search, tokenizerVersion: record.tokenizerVersion, projections: record.projections,
            indexes: record.indexes, schemas: [SchemaRecord(collection: "notes", version: 1, upcasters: [1: .custom])])
        #expect(Self.code { _ = try ConfigurationRecord(decoding: bad.encoded()) } == .corrupt)
        bad.schemas = []
        #expect(try ConfigurationRecord(decoding: bad.encoded()) == bad)
    }

    @Test func aMoveAtAVersionIsRecordedInFormatFiveOnly() throws {
        var record = Self.sample()
        record.schemas = [
            SchemaRecord(
                collection: "tasks", version: 3,
                upcasters: [1: .steps([.moveToCollection("archive", atVersion: 2), .removeField("done")])])
        ]
        let bytes = record.encoded()
        #expect(bytes[0] == ConfigurationRecord.versionedMoveFormatVersion)
        #expect(try ConfigurationRecord(decoding: bytes) == record)
        // The same record marked format 4 is not canonical: a library that reads format 4 only
        // refuses it as newer rather than misreading the step.
        var older = bytes
        older[0] = ConfigurationRecord.mergePolicyFormatVersion
        #expect(Self.code { _ = try ConfigurationRecord(decoding: older) } == .corrupt)
        // A move without a version stays in format 3 (tag 6), byte for byte as before.
        record.schemas[0].upcasters[1] = .steps([.moveToCollection("archive"), .removeField("done")])
        #expect(record.encoded()[0] == ConfigurationRecord.schemaFormatVersion)
        #expect(try ConfigurationRecord(decoding: record.encoded()) == record)
    }

    @Test(arguments: [1, 2, 3])
    func randomBytesNeverTrap(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var withSchemas = Self.sample()
        withSchemas.schemas = [
            SchemaRecord(
                collection: "notes", version: 4,
                upcasters: [
                    0: .steps([
                        .mapValues("p", ["high": 2], otherwise: 1), .splitField("n", separator: " ", into: ["a", "b"]),
                        .moveToCollection("archive", atVersion: 1),
                    ]),
                    3: .custom,
                ])
        ]
        for round in 0..<4_000 {
            let valid = round % 2 == 0 ? Self.sample().encoded() : withSchemas.encoded()
            var bytes: [UInt8]
            if Bool.random(using: &random) {
                bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            if let record = try? ConfigurationRecord(decoding: bytes) {
                #expect(record.encoded() == bytes, "whatever decodes is canonical")
            }
        }
        #expect((try? ConfigurationRecord(decoding: withSchemas.encoded())) == withSchemas)
    }
}
