package import EventStore
import Foundation

/// How records look in tables and in JSON lines.
package enum Rendering {
    /// A value as compact JSON (`"text"`, `3`, `["a"]`); `∅` for no value.
    package static func text(_ value: Value?) -> String {
        guard let value else { return "∅" }
        return String(decoding: value.jsonBytes(), as: UTF8.self)
    }

    /// An add-wins set's or counter's update in a few characters: `+3`, `+["work"] −["draft"]`.
    package static func update(_ update: FieldUpdate) -> String {
        if let increment = update.increment { return (increment >= 0 ? "+" : "−") + "\(increment.magnitude)" }
        var parts: [String] = []
        if !update.add.isEmpty { parts.append("+" + text(.array(update.add))) }
        if !update.remove.isEmpty { parts.append("−" + text(.array(update.remove.map(\.element)))) }
        return parts.isEmpty ? "(as it was)" : parts.joined(separator: " ")
    }

    /// An event's fields and updates: `name=value` pairs, then `views+3` or
    /// `tags+["a"] −["b"]`, each in name order.
    package static func changes(of event: Event) -> String {
        let updates = event.updates.keys.sorted().map { "\($0)" + update(event.updates[$0]!) }
        return ([fields(event.fields)].filter { !$0.isEmpty } + updates).joined(separator: " ")
    }

    /// Fields as `name=value` pairs in name order.
    package static func fields(_ fields: [String: Value]) -> String {
        fields.keys.sorted().map { "\($0)=\(text(fields[$0]))" }.joined(separator: " ")
    }

    /// A JSON object line from members (keys in byte order, deterministic).
    package static func jsonLine(_ members: [String: Value]) -> String {
        String(decoding: Value.object(members).jsonBytes(), as: UTF8.self)
    }

    /// A short event id: the first 8 hex digits of the origin, then the sequence.
    package static func shortID(_ id: EventID) -> String {
        "\(String(id.origin.description.prefix(8)))/\(id.sequence)"
    }

    /// An event as the log holds it, for a reader that sees it upcast: `{"op", "collection",
    /// "item", "schema", "fields"}`.
    package static func logged(_ event: Event) -> Value {
        [
            "op": .string("\(event.operation)"), "collection": .string(event.collection), "item": .string(event.item),
            "schema": .int(Int64(event.schema)), "fields": .object(event.fields),
            "updates": .object(event.updates.mapValues(\.jsonValue)),
        ]
    }

    /// One line saying that an event was read upcast, and how the log holds it.
    package static func upcastNote(_ original: Event) -> String {
        var fields = String(decoding: Value.object(original.fields).jsonBytes(), as: UTF8.self)
        if !original.updates.isEmpty {
            fields +=
                " "
                + changes(
                    of: Event(
                        id: original.id, hlc: original.hlc, collection: original.collection, item: original.item,
                        operation: original.operation, updates: original.updates))
        }
        return "(upcast from schema version \(original.schema); logged as \(original.operation) "
            + "\(original.collection)/\(original.item) \(Table.cut(fields, 80)))"
    }

    /// An event id as JSON: `{"origin": "<32 hex digits>", "seq": 2}`.
    package static func json(_ id: EventID) -> Value {
        ["origin": .string(id.origin.description), "seq": .int(Int64(id.sequence))]
    }

    /// A clock stamp as JSON: its raw value as a decimal string (64-bit values do not survive
    /// every JSON parser as numbers).
    package static func json(_ hlc: HLCTimestamp) -> Value { .string(String(hlc.rawValue)) }

    /// An item as a JSON line: `collection`, `id`, `version` (decimal HLC string), `fields`.
    package static func jsonLine(_ item: Item) -> String {
        jsonLine([
            "collection": .string(item.collection), "id": .string(item.id), "version": json(item.version),
            "fields": .object(item.fields),
        ])
    }

    /// An event as a JSON line (the canonical event JSON, as `export` writes it).
    package static func jsonLine(_ event: Event) -> String {
        String(decoding: event.jsonBytes(), as: UTF8.self)
    }

    /// A clock stamp for people: `2026-11-22T10:47:22.358Z+1`, UTC wall time to the exact
    /// millisecond, then the logical counter. ``ClockArgument/parse(_:)`` reads it back.
    package static func stamp(_ hlc: HLCTimestamp) -> String {
        let milliseconds = hlc.physical
        let date = Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000))
        let time = date.formatted(
            .iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false)
                .timeSeparator(.colon))
        let seconds = time.hasSuffix("Z") ? String(time.dropLast()) : time
        let fraction = String(milliseconds % 1000)
        return "\(seconds).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)Z+\(hlc.logical)"
    }

    /// A replay point for people: `seq 12` or `hlc 2026-11-22T10:47:22.358Z+1`.
    package static func point(_ point: ReplayPoint) -> String {
        switch point {
        case .seq(let seq): "seq \(seq)"
        case .hlc(let hlc): "hlc \(stamp(hlc))"
        }
    }

    /// A byte count for people: `512 B`, `4.0 KiB`, `1.2 GiB`.
    package static func bytes(_ count: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        guard unit > 0 else { return "\(count) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}

/// Names for replicas in tables: a given name (`phone`), or the first 8 hex digits of the id.
///
/// ```swift
/// let names = ReplicaNames([phone.replicaID: "phone"], local: laptop.replicaID)
/// names.event(event.id)   // "phone/4"
/// ```
package struct ReplicaNames: Sendable {
    /// Given names by replica.
    package var names: [ReplicaID: String]
    /// The replica whose store is shown, marked `(local)` when it has no name.
    package var local: ReplicaID?

    /// Creates names; replicas without one show as 8 hex digits.
    package init(_ names: [ReplicaID: String] = [:], local: ReplicaID? = nil) {
        self.names = names
        self.local = local
    }

    /// The replica's label.
    package func label(_ replica: ReplicaID) -> String {
        if let name = names[replica] { return name }
        let short = String(replica.description.prefix(8))
        return replica == local ? "\(short) (local)" : short
    }

    /// An event id as `label/sequence`.
    package func event(_ id: EventID) -> String {
        "\(names[id.origin] ?? String(id.origin.description.prefix(8)))/\(id.sequence)"
    }
}
