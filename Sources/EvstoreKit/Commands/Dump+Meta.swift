package import EventStore
import EventSync
import EventSyncService
import Foundation

/// One entry of `evstore dump --meta`: a metadata or projection-state key, decoded.
package struct MetaEntry: Sendable, Hashable {
    /// `meta`, or the active generation's state database (`g0.state`).
    package var database: String
    /// The key (`store.hlc`, `sync.remote.<url>`, `applied-through`, …).
    package var key: String
    /// The decoded value: integers as numbers, the replica id as hex, clock stamps as decimal
    /// strings (like every stamp in the tool's JSON), sync cursors as objects `{"epoch",
    /// "pushed", "pulled", "mark", "digest", "signature", "deferred"}`, other text as a string, other bytes as hex.
    package var value: Value
    /// The value as the table shows it (`2026-11-22T10:39:41.595Z+1` for a stamp).
    package var text: String
    /// What the entry means, in a few words.
    package var about: String

    /// The entry as a JSON line: `{"database", "key", "value", "text", "about"}`.
    package var jsonLine: String {
        Rendering.jsonLine([
            "database": .string(database), "key": .string(key), "value": value, "text": .string(text),
            "about": .string(about),
        ])
    }
}

extension Dump {
    /// Every metadata entry (replica id, clock, format version, generation, sync cursors and
    /// epochs, the application's keys) and the projection state (checkpoint, counters), decoded.
    package static func metaEntries(_ store: Store) throws -> [MetaEntry] {
        try store.read { reader in
            let generation = try reader.activeGeneration()
            let meta = try reader.allMetadata().map {
                MetaDecoder.decode(database: "meta", key: $0.key, bytes: $0.value)
            }
            let state = try reader.projectionState().map {
                MetaDecoder.decode(database: "g\(generation).state", key: $0.key, bytes: $0.value)
            }
            return meta + state
        }
    }

    func meta(_ store: Store, _ output: Output) throws {
        let entries = try Dump.metaEntries(store).prefix(limit)
        switch format {
        case .jsonl: for entry in entries { output.line(entry.jsonLine) }
        case .table:
            var table = Table(columns: ["database", "key", "value", "meaning"])
            table.maxCellWidth = 64
            for entry in entries { table.add([entry.database, entry.key, entry.text, entry.about]) }
            table.render().forEach(output.line)
        }
    }
}

/// Shows metadata and state entries: the engine's through ``EventStore/StoredEntry`` and the sync
/// module's through its own key names and ``EventSync/SyncCursor`` decoder, so that a format
/// change in either is a change here too; anything else shows as text, a number or hex.
enum MetaDecoder {
    static func decode(database: String, key: String, bytes: [UInt8]) -> MetaEntry {
        func entry(_ value: Value, _ text: String, _ about: String) -> MetaEntry {
            MetaEntry(database: database, key: key, value: value, text: text, about: about)
        }
        func number(_ about: String) -> MetaEntry {
            guard let number = uint(bytes) else { return raw(about) }
            return entry(.int(Int64(clamping: number)), "\(number)", about)
        }
        func raw(_ about: String) -> MetaEntry {
            if let text = printable(bytes) { return entry(.string(text), text, about) }
            if bytes.count == 8, let number = uint(bytes) {
                return entry(.int(Int64(clamping: number)), "\(number)", about)
            }
            return entry(.string(hex(bytes)), "0x" + hex(bytes), about)
        }
        func engine(_ stored: StoredEntry) -> MetaEntry {
            switch stored {
            case .formatVersion(let version):
                return entry(.int(Int64(clamping: version)), "\(version)", "store format version")
            case .replicaID(let id):
                return entry(.string(hex(bytes)), "\(id)", "this replica's id (the origin of its events)")
            case .clock(let stamp):
                return entry(.string(String(stamp.rawValue)), Rendering.stamp(stamp), "clock: the greatest stamp seen")
            case .originSequence(let sequence):
                return entry(
                    .int(Int64(clamping: sequence)), "\(sequence)", "the last sequence this replica gave an event")
            case .generation(let generation):
                return entry(
                    .int(Int64(clamping: generation)), "\(generation)", "active projection generation (g0.* or g1.*)")
            case .created(let milliseconds):
                let text = String(Rendering.stamp(HLCTimestamp(physical: milliseconds, logical: 0)).dropLast(2))
                return entry(.int(Int64(clamping: milliseconds)), text, "creation time (ms since 1970)")
            case .retiredReplicas(let ids):
                let texts = ids.map(\.description)
                return entry(
                    .array(texts.map(Value.string)), texts.joined(separator: " "),
                    "replica ids this store wrote under before")
            case .rebuildNeeded:
                return raw("projections to rebuild (events were restamped, or the configuration changed)")
            case .configuration(let record):
                return entry(record.json, record.text, "the configuration the projections are built with")
            case .appliedThrough(let seq):
                return entry(
                    .int(Int64(clamping: seq)), "\(seq)",
                    "checkpoint: the projections have applied the log through this seq")
            case .searchIndex(let index):
                let json: Value = .object([
                    "nextDocument": .int(Int64(index.nextDocument)), "segments": .int(Int64(index.segments)),
                    "postings": .int(Int64(clamping: index.postings)), "merging": .bool(index.merging),
                    "cleanup": .int(Int64(index.cleanup)),
                ])
                return entry(json, index.text, "search index: live segments, merge and clean-up")
            case .indexRuns(let runs, let entries):
                return entry(
                    .object(["runs": .int(Int64(runs)), "entries": .int(Int64(clamping: entries))]),
                    "\(runs) runs, \(entries) entries", "declared indexes: sorted runs and their entries")
            case .itemCount(let collection, let count):
                return entry(.int(count), "\(count)", "items in collection \(collection)")
            case .searchTotals(let collection, let documents, let totalLength):
                return entry(
                    .object([
                        "documents": .int(Int64(clamping: documents)),
                        "totalLength": .int(Int64(clamping: totalLength)),
                    ]),
                    "\(documents) documents, total length \(totalLength)",
                    "search index: live documents of collection \(collection)")
            case .deadDocuments(let documents, let dead):
                return entry(
                    .int(Int64(dead)), "\(dead) dead",
                    "search index: dead doc ids among \(documents.lowerBound)…\(documents.upperBound)")
            case .projectionVersion(_, let version):
                return entry(.int(Int64(clamping: version)), "\(version)", "version of that projection")
            }
        }
        if database == "meta" {
            do {
                if let stored = try StoredEntry(metaKey: key, value: bytes) { return engine(stored) }
            } catch {
                return raw("engine entry that does not decode (\(error))")
            }
            if key == SyncService.epochKey {
                let text = String(decoding: bytes, as: UTF8.self)
                return entry(.string(text), text, "server: this store's epoch")
            }
            if key == SyncService.epochSigningKey {
                // A secret: whoever reads it could sign continuity marks.
                return entry(
                    .string("(secret)"), "(\(bytes.count) bytes, not shown)",
                    "server: the key that signs this epoch's continuity marks")
            }
            if key.hasPrefix(SyncCursor.keyPrefix) {
                guard let cursor = try? SyncCursor(decoding: bytes) else {
                    return raw("sync cursor that does not decode")
                }
                return entry(cursor.json, cursor.text, "sync cursor: how far this replica synced with that server")
            }
            if key.hasPrefix(SyncService.originKeyPrefix) {
                return number("server: the last sequence received from that replica")
            }
            if key.hasPrefix(SyncService.ownerKeyPrefix) {
                let text = String(decoding: bytes, as: UTF8.self)
                return entry(.string(text), text, "server: the credential that owns that replica id")
            }
            if key.hasPrefix(SyncService.declaredKeyPrefix) {
                return raw("server: what that replica's owner holds, in this epoch")
            }
            return raw(key.hasPrefix(StoredEntry.metaPrefix) ? "engine entry" : "application entry")
        }
        do {
            if let stored = try StoredEntry(stateKey: key, value: bytes) { return engine(stored) }
        } catch {
            return raw("projection state that does not decode (\(error))")
        }
        return raw("projection state")
    }

    /// A big-endian unsigned integer of 1 to 8 bytes.
    static func uint(_ bytes: [UInt8]) -> UInt64? {
        guard (1...8).contains(bytes.count) else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The bytes as text when they are valid UTF-8 without control characters.
    static func printable(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return text
    }
}

extension SyncCursor {
    /// The cursor as a JSON value: `{"epoch", "pushed", "pulled", "mark", "digest", "signature",
    /// "deferred"}` (`signature` is null for a mark the server did not sign).
    var json: Value {
        [
            "epoch": epoch.map(Value.string) ?? .null, "pushed": .int(Int64(clamping: pushed)),
            "pulled": .int(Int64(clamping: pulled)), "mark": .int(Int64(clamping: mark)),
            "digest": .string(markDigest.description),
            "signature": markSignature.map { .string($0.description) } ?? .null,
            "deferred": .int(Int64(deferredRelays.count)),
        ]
    }

    /// One line for people.
    var text: String {
        "pushed ≤ \(pushed), pulled ≤ \(pulled) (server seq), epoch \(epoch.map { String($0.prefix(8)) + "…" } ?? "none")"
            + (deferredRelays.isEmpty ? "" : ", \(deferredRelays.count) relays waiting for their owner")
    }
}

extension ConfigurationRecord {
    /// The record as a JSON value: `{"tokenizer", "tagField", "defaultFields", "collections",
    /// "projections"}` and, when the store declares indexes, `"indexes"`, and schemas, `"schemas"`;
    /// each field list an array of `{"name", "weight"}`, each projection `{"name", "version",
    /// "databases", "stale"}`, each index `{"name", "collection", "fields"}`, each schema
    /// `{"collection", "version", "upcasters": [{"from", "steps": [text…]} or {"from", "code": true}],
    /// "merge": {field: "add-wins-set"|"counter"}}`.
    var json: Value {
        func fields(_ fields: [SearchConfiguration.Field]) -> Value {
            .array(fields.map { ["name": .string($0.name), "weight": .int(Int64($0.weight))] })
        }
        var json: [String: Value] = [
            "tokenizer": .int(Int64(tokenizerVersion)), "tagField": .string(search.tagField),
            "defaultFields": fields(search.defaultFields),
            "collections": .object(search.collections.mapValues(fields)),
            "projections": .array(
                projections.map {
                    [
                        "name": .string($0.name), "version": .int(Int64($0.version)),
                        "databases": .array($0.databases.map(Value.string)), "stale": .bool($0.isStale),
                    ]
                }),
        ]
        if !indexes.isEmpty {
            json["indexes"] = .array(
                indexes.map {
                    [
                        "name": .string($0.name), "collection": .string($0.collection),
                        "fields": .array($0.fields.map(Value.string)),
                    ]
                })
        }
        if !schemas.isEmpty {
            json["schemas"] = .array(
                schemas.map { schema in
                    [
                        "collection": .string(schema.collection), "version": .int(Int64(schema.version)),
                        "upcasters": .array(
                            schema.upcastVersions.map { from in
                                var upcaster: [String: Value] = ["from": .int(Int64(from))]
                                switch schema.upcasters[from] {
                                case .steps(let steps)?:
                                    upcaster["steps"] = .array(steps.map { .string($0.description) })
                                case .custom?, nil: upcaster["code"] = true
                                }
                                return .object(upcaster)
                            }),
                        "merge": .object(schema.mergePolicies.mapValues { .string($0.description) }),
                    ]
                })
        }
        return .object(json)
    }

    /// One line for people: `search title×3 …; tasks: title×4 notes×1; tags from tags; tokenizer 2;
    /// projections notes-per-tag v1 (stale); indexes tasks(done,due)`.
    var text: String {
        let fields = SearchConfiguration.describe
        var parts = ["search " + fields(search.defaultFields)]
        for name in search.collections.keys.sorted() {
            parts.append("\(name): " + fields(search.collections[name] ?? []))
        }
        parts.append("tags from \(search.tagField)")
        parts.append("tokenizer \(tokenizerVersion)")
        if !projections.isEmpty {
            parts.append(
                "projections "
                    + projections.map { "\($0.name) v\($0.version)" + ($0.isStale ? " (stale)" : "") }.joined(
                        separator: ", "))
        }
        if !indexes.isEmpty { parts.append("indexes " + indexes.map(\.name).joined(separator: ", ")) }
        for schema in schemas {
            let upcasters = schema.upcastVersions.map { from -> String in
                switch schema.upcasters[from] {
                case .steps(let steps)?: "\(from)→\(from + 1): " + steps.map(\.description).joined(separator: ", ")
                case .custom?, nil: "\(from)→\(from + 1): code"
                }
            }
            let policies = schema.mergePolicies.keys.sorted().map { "\($0) \(schema.mergePolicies[$0]!)" }
            parts.append(
                "schema \(schema.collection) v\(schema.version)"
                    + (upcasters.isEmpty ? "" : " (" + upcasters.joined(separator: "; ") + ")")
                    + (policies.isEmpty ? "" : " merging " + policies.joined(separator: ", ")))
        }
        return parts.joined(separator: "; ")
    }
}
