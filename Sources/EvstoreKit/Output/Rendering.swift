public import EventStore

/// How records look in tables and in JSON lines.
public enum Rendering {
    /// A value as compact JSON (`"text"`, `3`, `["a"]`); `∅` for no value.
    public static func text(_ value: Value?) -> String {
        guard let value else { return "∅" }
        return String(decoding: value.jsonBytes(), as: UTF8.self)
    }

    /// Fields as `name=value` pairs in name order.
    public static func fields(_ fields: [String: Value]) -> String {
        fields.keys.sorted().map { "\($0)=\(text(fields[$0]))" }.joined(separator: " ")
    }

    /// A JSON object line from members (keys in byte order, deterministic).
    public static func jsonLine(_ members: [String: Value]) -> String {
        String(decoding: Value.object(members).jsonBytes(), as: UTF8.self)
    }

    /// A short event id: the first 8 hex digits of the origin, then the sequence.
    public static func shortID(_ id: EventID) -> String {
        "\(String(id.origin.description.prefix(8)))/\(id.sequence)"
    }

    /// An event id as JSON.
    public static func json(_ id: EventID) -> Value {
        ["origin": .string(id.origin.description), "seq": .int(Int64(id.sequence))]
    }

    /// A stamp as JSON: the raw value as a decimal string and its time.
    public static func json(_ hlc: HLCTimestamp) -> Value { .string(String(hlc.rawValue)) }

    /// An item as a JSON line.
    public static func jsonLine(_ item: Item) -> String {
        jsonLine([
            "collection": .string(item.collection), "id": .string(item.id), "version": json(item.version),
            "fields": .object(item.fields),
        ])
    }

    /// An event as a JSON line (the canonical event JSON, as `export` writes it).
    public static func jsonLine(_ event: Event) -> String {
        String(decoding: event.jsonBytes(), as: UTF8.self)
    }
}
