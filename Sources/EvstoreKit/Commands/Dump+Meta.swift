public import EventStore
import EventSync
import Foundation

/// One entry of `evstore dump --meta`: a metadata or projection-state key, decoded.
public struct MetaEntry: Sendable, Hashable {
    /// `meta`, or the active generation's state database (`g0.state`).
    public var database: String
    /// The key (`store.hlc`, `sync.remote.<url>`, `applied-through`, …).
    public var key: String
    /// The decoded value: integers as numbers, the replica id as hex, clock stamps as decimal
    /// strings (like every stamp in the tool's JSON), sync cursors as objects `{"epoch",
    /// "pushed", "pulled", "mark", "digest", "deferred"}`, other text as a string, other bytes as hex.
    public var value: Value
    /// The value as the table shows it (`2026-11-22T10:39:41.595Z+1` for a stamp).
    public var text: String
    /// What the entry means, in a few words.
    public var about: String

    /// The entry as a JSON line: `{"database", "key", "value", "text", "about"}`.
    public var jsonLine: String {
        Rendering.jsonLine([
            "database": .string(database), "key": .string(key), "value": value, "text": .string(text),
            "about": .string(about),
        ])
    }
}

extension Dump {
    /// Every metadata entry (replica id, clock, format version, generation, sync cursors and
    /// epochs, the application's keys) and the projection state (checkpoint, counters), decoded.
    public static func metaEntries(_ store: Store) throws -> [MetaEntry] {
        try store.read { reader in
            let generation = try reader.activeGeneration()
            let meta = try reader.allMetadata().map { MetaDecoder.decode(database: "meta", key: $0.key, bytes: $0.value) }
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

/// Decodes the known metadata and state entries; anything else shows as text, a number or hex.
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
            if bytes.count == 8, let number = uint(bytes) { return entry(.int(Int64(clamping: number)), "\(number)", about) }
            return entry(.string(hex(bytes)), "0x" + hex(bytes), about)
        }
        if database == "meta" {
            switch key {
            case "store.format": return number("store format version")
            case "store.replica":
                guard bytes.count == 16 else { return raw("this replica's id") }
                return entry(.string(hex(bytes)), hex(bytes), "this replica's id (the origin of its events)")
            case "store.hlc":
                guard let stamp = uint(bytes) else { return raw("hybrid logical clock") }
                return entry(.string(String(stamp)), Rendering.stamp(HLCTimestamp(rawValue: stamp)), "clock: the greatest stamp seen")
            case "store.origin-seq": return number("the last sequence this replica gave an event")
            case "store.generation": return number("active projection generation (g0.* or g1.*)")
            case "store.created":
                guard let milliseconds = uint(bytes) else { return raw("creation time") }
                let text = String(Rendering.stamp(HLCTimestamp(physical: milliseconds, logical: 0)).dropLast(2))
                return entry(.int(Int64(clamping: milliseconds)), text, "creation time (ms since 1970)")
            case "store.retired-replicas":
                guard bytes.count % 16 == 0 else { return raw("replica ids this store left") }
                let ids = stride(from: 0, to: bytes.count, by: 16).map { hex(Array(bytes[$0..<($0 + 16)])) }
                return entry(.array(ids.map(Value.string)), ids.joined(separator: " "), "replica ids this store wrote under before")
            case "store.rebuild-needed": return raw("projections to rebuild (events were restamped)")
            case "sync.epoch":
                let text = String(decoding: bytes, as: UTF8.self)
                return entry(.string(text), text, "server: this store's epoch")
            default: break
            }
            if key.hasPrefix("sync.remote.") {
                guard let cursor = try? SyncCursor(decoding: bytes) else { return raw("sync cursor") }
                return entry(cursor.json, cursor.text, "sync cursor: how far this replica synced with that server")
            }
            if key.hasPrefix("sync.origin.") { return number("server: the last sequence received from that replica") }
            if key.hasPrefix("sync.owner.") {
                let text = String(decoding: bytes, as: UTF8.self)
                return entry(.string(text), text, "server: the credential that owns that replica id")
            }
            if key.hasPrefix("sync.declared.") { return raw("server: what that replica's owner holds, in this epoch") }
            return raw(key.hasPrefix("store.") ? "engine entry" : "application entry")
        }
        switch key {
        case "applied-through": return number("checkpoint: the projections have applied the log through this seq")
        case "search.next-doc": return number("search index: the next document number")
        default: break
        }
        if key.hasPrefix("count.") { return number("items in collection \(key.dropFirst("count.".count))") }
        if key.hasPrefix("projection-version.") { return number("version of that projection") }
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
    /// The cursor as a JSON value: `{"epoch", "pushed", "pulled", "mark", "digest", "deferred"}`.
    var json: Value {
        [
            "epoch": epoch.map(Value.string) ?? .null, "pushed": .int(Int64(clamping: pushed)),
            "pulled": .int(Int64(clamping: pulled)), "mark": .int(Int64(clamping: mark)),
            "digest": .string(markDigest.description), "deferred": .int(Int64(deferredRelays.count)),
        ]
    }

    /// One line for people.
    var text: String {
        "pushed ≤ \(pushed), pulled ≤ \(pulled) (server seq), epoch \(epoch.map { String($0.prefix(8)) + "…" } ?? "none")"
            + (deferredRelays.isEmpty ? "" : ", \(deferredRelays.count) relays waiting for their owner")
    }
}
