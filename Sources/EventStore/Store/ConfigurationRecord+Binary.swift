/// The binary encoding of a ``ConfigurationRecord`` (meta key `store.configuration`).
///
/// Canonical and deterministic: equal records give equal bytes, so a store rewrites its record
/// only when something changed, and the decoder accepts only the canonical encoding.
///
/// ```
/// u8      format (1 to 5)
/// varint  tokenizer version
/// string  tag field
/// fields  default fields
/// varint  collection count, then per collection (sorted by name): string name, fields
/// varint  projection count, then per projection (sorted by name):
///         string name, varint version (two's complement), varint database count,
///         string per database (sorted), u8 flags (bit 0: stale)
/// (format 2 to 5) varint index count, then per index (sorted by collection, then fields):
///         string collection, varint field count, string per field
/// (format 3 to 5) varint schema count, then per schema (sorted by collection):
///         string collection, varint version, varint upcaster count, then per upcaster (by
///         version): varint version, u8 kind (0 code, 1 steps), [varint step count, steps]
///         (format 4 and 5) varint merge policy count, then per field (sorted by name):
///         string field, u8 policy (1 add-wins set, 2 counter)
///
/// step: u8 tag, then 1 rename: string, string · 2 default: string, value · 3 remove: string ·
///       4 map: string, varint pair count, (value, value) per pair sorted by the key's bytes,
///       u8 has-otherwise, [value] · 5 split: string, string, varint count, strings · 6 move: string
///       · 7 move at a version (format 5 only): string, varint version
///
/// fields: varint count, then per field (sorted by name, then weight): string name, varint weight
/// string: varint byte count, UTF-8 bytes
/// ```
extension ConfigurationRecord {
    /// The encoding version of a record without indexes: written byte for byte as before
    /// indexes existed, so older libraries keep reading it.
    static let formatVersion: UInt8 = 1
    /// The encoding version of a record with indexes (format 1, then the indexes), which older
    /// libraries refuse with a clear message instead of misreading; the newest this library
    /// reads. A greater version is refused with ``EventStoreError/Code/unsupportedFormat``.
    static let indexedFormatVersion: UInt8 = 2
    /// The encoding version of a record with collection schemas (format 2, then the schemas).
    static let schemaFormatVersion: UInt8 = 3
    /// The encoding version of a record whose schemas declare merge policies (format 3, with
    /// each schema's policies).
    static let mergePolicyFormatVersion: UInt8 = 4
    /// The encoding version of a record whose schemas move events to another collection at a
    /// named version (format 4, whose steps may then be move-at-version steps, tag 7).
    static let versionedMoveFormatVersion: UInt8 = 5
    /// The newest version this library reads.
    static let newestFormatVersion: UInt8 = 5

    /// The oldest format that holds the record, so that older libraries read what they can.
    private var encodingFormat: UInt8 {
        if schemas.contains(where: \.hasVersionedMoves) { return ConfigurationRecord.versionedMoveFormatVersion }
        if schemas.contains(where: { !$0.mergePolicies.isEmpty }) {
            return ConfigurationRecord.mergePolicyFormatVersion
        }
        if !schemas.isEmpty { return ConfigurationRecord.schemaFormatVersion }
        return indexes.isEmpty ? ConfigurationRecord.formatVersion : ConfigurationRecord.indexedFormatVersion
    }

    /// The record's canonical bytes.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        let format = encodingFormat
        writer.write(format)
        writer.write(varint: UInt64(bitPattern: Int64(tokenizerVersion)))
        writer.write(string: search.tagField)
        ConfigurationRecord.write(search.defaultFields, to: &writer)
        let collections = search.collections.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        writer.write(varint: collections.count)
        for name in collections {
            writer.write(string: name)
            ConfigurationRecord.write(search.collections[name] ?? [], to: &writer)
        }
        writer.write(varint: projections.count)
        for projection in projections {
            writer.write(string: projection.name)
            writer.write(varint: UInt64(bitPattern: Int64(projection.version)))
            writer.write(varint: projection.databases.count)
            for database in projection.databases { writer.write(string: database) }
            writer.write(projection.isStale ? UInt8(1) : UInt8(0))
        }
        if format >= ConfigurationRecord.indexedFormatVersion {
            writer.write(varint: indexes.count)
            for index in indexes {
                writer.write(string: index.collection)
                writer.write(varint: index.fields.count)
                for field in index.fields { writer.write(string: field) }
            }
        }
        if format >= ConfigurationRecord.schemaFormatVersion {
            writer.write(varint: schemas.count)
            for schema in schemas {
                writer.write(string: schema.collection)
                writer.write(varint: UInt64(schema.version))
                writer.write(varint: schema.upcasters.count)
                for version in schema.upcastVersions {
                    writer.write(varint: UInt64(version))
                    switch schema.upcasters[version] {
                    case .steps(let steps):
                        writer.write(UInt8(1))
                        writer.write(varint: steps.count)
                        for step in steps { step.write(to: &writer) }
                    case .custom, nil:
                        writer.write(UInt8(0))
                    }
                }
                if format >= ConfigurationRecord.mergePolicyFormatVersion {
                    writer.write(varint: schema.mergePolicies.count)
                    for field in schema.mergePolicies.keys.sorted(by: utf8Less) {
                        writer.write(string: field)
                        writer.write(schema.mergePolicies[field] == .counter ? UInt8(2) : UInt8(1))
                    }
                }
            }
        }
        return writer.bytes
    }

    /// Decodes a record written by ``encoded()``.
    ///
    /// - Throws: ``EventStoreError`` with code ``EventStoreError/Code/corrupt`` for bytes that
    ///   are truncated, malformed, hold invalid UTF-8 or are not in canonical form; with
    ///   ``EventStoreError/Code/unsupportedFormat`` for a record written by a newer version.
    ///   Never traps, whatever the bytes.
    package init(decoding bytes: [UInt8]) throws {
        let record = try bytes.withUnsafeBytes { buffer -> ConfigurationRecord in
            var reader = ByteReader(buffer)
            let format = try reader.readByte()
            guard format <= ConfigurationRecord.newestFormatVersion, format > 0 else {
                if format > ConfigurationRecord.newestFormatVersion {
                    throw EventStoreError(
                        .unsupportedFormat,
                        "the configuration record has format \(format); this library reads up to \(ConfigurationRecord.newestFormatVersion)"
                    )
                }
                throw EventStoreError(.corrupt, "configuration record of unknown format \(format)")
            }
            let tokenizerVersion = Int(truncatingIfNeeded: Int64(bitPattern: try reader.readVarint()))
            var search = SearchConfiguration()
            search.tagField = try reader.readString()
            search.defaultFields = try ConfigurationRecord.readFields(&reader)
            search.collections = [:]
            for _ in 0..<(try reader.readCount(minimumBytesEach: 2)) {
                let name = try reader.readString()
                search.collections[name] = try ConfigurationRecord.readFields(&reader)
            }
            var projections: [ProjectionRecord] = []
            for _ in 0..<(try reader.readCount(minimumBytesEach: 4)) {
                let name = try reader.readString()
                let version = Int(truncatingIfNeeded: Int64(bitPattern: try reader.readVarint()))
                let databases = try (0..<(try reader.readCount())).map { _ in try reader.readString() }
                let flags = try reader.readByte()
                guard flags <= 1 else {
                    throw EventStoreError(.corrupt, "configuration record: projection flags \(flags)")
                }
                projections.append(
                    ProjectionRecord(name: name, version: version, databases: databases, isStale: flags == 1))
            }
            var indexes: [IndexDefinition] = []
            if format >= 2 {
                for _ in 0..<(try reader.readCount(minimumBytesEach: 3)) {
                    let collection = try reader.readString()
                    let fields = try (0..<(try reader.readCount())).map { _ in try reader.readString() }
                    let index = IndexDefinition(collection, fields: fields)
                    do {
                        try index.validate()
                    } catch let error as EventStoreError {
                        throw EventStoreError(.corrupt, "configuration record: \(error.message)")
                    }
                    indexes.append(index)
                }
            }
            var schemas: [SchemaRecord] = []
            if format >= 3 {
                for _ in 0..<(try reader.readCount(minimumBytesEach: 4)) {
                    let collection = try reader.readString()
                    let version = try reader.readVarint()
                    guard version <= UInt64(UInt16.max) else {
                        throw EventStoreError(
                            .corrupt, "configuration record: schema of \(collection) at version \(version)")
                    }
                    var upcasters: [UInt16: SchemaRecord.Upcaster] = [:]
                    for _ in 0..<(try reader.readCount(minimumBytesEach: 2)) {
                        let from = try reader.readVarint()
                        guard from < version else {
                            throw EventStoreError(
                                .corrupt, "configuration record: upcaster of \(collection) from version \(from)")
                        }
                        switch try reader.readByte() {
                        case 0: upcasters[UInt16(from)] = .custom
                        case 1:
                            let count = try reader.readCount(minimumBytesEach: 2)
                            upcasters[UInt16(from)] = .steps(
                                try (0..<count).map { _ in try UpcastStep(reading: &reader) })
                        case let kind:
                            throw EventStoreError(.corrupt, "configuration record: upcaster kind \(kind)")
                        }
                    }
                    var policies: [String: MergePolicy] = [:]
                    if format >= ConfigurationRecord.mergePolicyFormatVersion {
                        for _ in 0..<(try reader.readCount(minimumBytesEach: 2)) {
                            let field = try reader.readString()
                            switch try reader.readByte() {
                            case 1: policies[field] = .addWinsSet
                            case 2: policies[field] = .counter
                            case let kind:
                                throw EventStoreError(
                                    .corrupt, "configuration record: merge policy \(kind) of \(field)")
                            }
                        }
                    }
                    schemas.append(
                        SchemaRecord(
                            collection: collection, version: UInt16(version), upcasters: upcasters,
                            mergePolicies: policies))
                }
            }
            guard reader.isAtEnd else {
                throw EventStoreError(.corrupt, "configuration record: \(reader.remaining) bytes after the end")
            }
            return ConfigurationRecord(
                search: search, tokenizerVersion: tokenizerVersion, projections: projections, indexes: indexes,
                schemas: schemas)
        }
        // One encoding per record: duplicates, unsorted lists or out-of-range weights do not
        // re-encode to the same bytes.
        guard record.encoded() == bytes else {
            throw EventStoreError(.corrupt, "configuration record is not in canonical form")
        }
        self = record
    }

    private static func write(_ fields: [SearchConfiguration.Field], to writer: inout ByteWriter) {
        writer.write(varint: fields.count)
        for field in fields {
            writer.write(string: field.name)
            writer.write(varint: UInt64(bitPattern: Int64(field.weight)))
        }
    }

    private static func readFields(_ reader: inout ByteReader) throws -> [SearchConfiguration.Field] {
        try (0..<(try reader.readCount(minimumBytesEach: 2))).map { _ in
            let name = try reader.readString()
            let weight = try reader.readVarint()
            guard (1...100).contains(weight) else {
                throw EventStoreError(.corrupt, "configuration record: field \(name) has weight \(weight) (1…100)")
            }
            return SearchConfiguration.Field(name: name, weight: Int(weight))
        }
    }
}
