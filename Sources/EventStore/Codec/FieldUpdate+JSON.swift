/// The JSON form of an event's ``Event/updates`` (the `updates` member; omitted when empty):
///
/// ```json
/// "updates":{"tags":{"add":["work"],"remove":[{"element":"draft","seen":["3f2a…/7"]}]},
///            "views":{"increment":1}}
/// ```
///
/// A counter's update has only `increment` (an integer); a set's has `add` (values), `remove`
/// (objects with the `element` and the `seen` additions as `origin/sequence` event ids), or
/// both (`{"add":[]}` when it changes nothing: a list written again as it was). No other key is
/// accepted.
extension FieldUpdate {
    /// The update as a JSON value.
    package var jsonValue: Value {
        if let increment { return .object(["increment": .int(increment)]) }
        var members: [String: Value] = [:]
        if !add.isEmpty || remove.isEmpty { members["add"] = .array(add) }
        if !remove.isEmpty {
            members["remove"] = .array(
                remove.map {
                    .object(["element": $0.element, "seen": .array($0.seen.map { .string($0.description) })])
                })
        }
        return .object(members)
    }

    /// Decodes an update of field `name` from its JSON value.
    ///
    /// - Throws: ``EventStoreError/Code/invalidEvent`` naming what is wrong.
    init(jsonValue: Value, field name: String) throws {
        func shape(_ message: String) -> EventStoreError {
            EventStoreError(.invalidEvent, "not an event: \"updates.\(name)\" \(message)")
        }
        guard case .object(let members) = jsonValue, !members.isEmpty else {
            throw shape("must be an object with \"increment\", or with \"add\" and/or \"remove\"")
        }
        if let increment = members["increment"] {
            guard members.count == 1 else { throw shape("has \"increment\" and other keys") }
            guard case .int(let delta) = increment else { throw shape("\"increment\" must be an integer") }
            self.init(increment: delta)
            return
        }
        if let unknown = members.keys.filter({ $0 != "add" && $0 != "remove" }).min(by: utf8Less) {
            throw shape("has the unknown key \(unknown.debugDescription) (an update has increment, add, remove)")
        }
        self.init()
        if let add = members["add"] {
            guard case .array(let elements) = add else { throw shape("\"add\" must be an array") }
            self.add = elements
        }
        if let remove = members["remove"] {
            guard case .array(let removals) = remove else { throw shape("\"remove\" must be an array") }
            self.remove = try removals.map { removal in
                guard case .object(let members) = removal, let element = members["element"],
                    case .array(let seen)? = members["seen"], members.count == 2
                else { throw shape("\"remove\" holds objects with exactly \"element\" and \"seen\" (an array)") }
                return Removal(
                    element: element,
                    seen: try seen.map { id in
                        guard case .string(let text) = id, let parsed = FieldUpdate.seenID(text) else {
                            throw shape(
                                "\"seen\" holds event ids as \"origin/sequence\" strings (32 hex digits, a slash, "
                                    + "1 to 19 digits without a leading zero)")
                        }
                        return parsed
                    })
            }
        }
    }
}

extension FieldUpdate {
    /// An addition's id as a removal names it: `origin/sequence`, 32 hex digits in either case,
    /// then 1 to 19 decimal digits without a leading zero (what `openapi.json` states).
    static func seenID(_ text: String) -> EventID? {
        let parts = text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 32, (1...19).contains(parts[1].count),
            parts[1].first != UInt8(ascii: "0"),
            parts[1].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let origin = ReplicaID(hex: String(decoding: parts[0], as: UTF8.self).lowercased()),
            let sequence = UInt64(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        return EventID(origin: origin, sequence: sequence)
    }
}

extension Event {
    /// `updates` as a JSON object value.
    var updatesJSONValue: Value { .object(updates.mapValues(\.jsonValue)) }

    /// Decodes the `updates` member of an event's JSON object.
    static func updates(jsonValue: Value?) throws -> [String: FieldUpdate] {
        switch jsonValue {
        case nil, .null?: return [:]
        case .object(let members)?:
            var updates: [String: FieldUpdate] = [:]
            for (name, value) in members { updates[name] = try FieldUpdate(jsonValue: value, field: name) }
            return updates
        default: throw EventStoreError(.invalidEvent, "not an event: \"updates\" must be an object")
        }
    }
}
