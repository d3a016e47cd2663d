import EventStore
import Foundation
import Testing

/// JSON lines parsed with Foundation's `JSONSerialization` — a parser independent of the
/// project's own codec — so the tool's output is checked as any JSON consumer would read it.
enum JSONLines {
    /// Parses every line of `text` as a JSON object; records an issue for a line that is not one.
    static func objects(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        var objects: [[String: Any]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
                let object = parsed as? [String: Any]
            else {
                Issue.record("not a JSON object: \(line)", sourceLocation: sourceLocation)
                continue
            }
            objects.append(object)
        }
        return objects
    }

    /// Parses standard output of a run as JSON lines.
    static func objects(_ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation) -> [[String: Any]] {
        objects(result.stdout, sourceLocation: sourceLocation)
    }

    /// A JSON value as canonical text (sorted keys), for comparing parsed output with expectations.
    static func canonical(_ object: Any?) -> String {
        guard let object else { return "<missing>" }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return "<not JSON: \(object)>" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A `Value` as canonical text, built through Foundation objects (not the project's encoder).
    static func canonical(_ value: Value?) -> String { canonical(value.map(foundationObject) ?? NSNull()) }

    /// Fields as canonical text.
    static func canonical(fields: [String: Value]) -> String { canonical(Value.object(fields)) }

    /// A `Value` as the Foundation object `JSONSerialization` would produce for it.
    static func foundationObject(_ value: Value) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let bool): bool
        case .int(let int): Int(int)
        case .double(let double): double
        case .string(let string): string
        case .array(let array): array.map(foundationObject)
        case .object(let object): object.mapValues(foundationObject)
        }
    }

    /// The sorted member names of an object.
    static func keys(_ object: [String: Any]) -> [String] { object.keys.sorted() }

    /// An integer member (JSON numbers parse as `NSNumber`).
    static func int(_ object: [String: Any], _ key: String) -> Int? { (object[key] as? NSNumber)?.intValue }

    /// A boolean member, read from its JSON text (`true`/`false`, not a number).
    static func bool(_ object: [String: Any], _ key: String) -> Bool? {
        switch canonical(object[key]) {
        case "true": true
        case "false": false
        default: nil
        }
    }

    /// A string member.
    static func string(_ object: [String: Any], _ key: String) -> String? { object[key] as? String }

    /// An object member.
    static func object(_ object: [String: Any], _ key: String) -> [String: Any]? { object[key] as? [String: Any] }

    /// Items printed as JSON lines (`dump --items`, `replay`), keyed `collection/id`, each as its
    /// canonical fields and version: `{"title":"x"} @117…`.
    static func items(_ objects: [[String: Any]]) -> [String: String] {
        var items: [String: String] = [:]
        for object in objects {
            let key = "\(string(object, "collection") ?? "?")/\(string(object, "id") ?? "?")"
            items[key] = "\(canonical(object["fields"])) @\(string(object, "version") ?? "?")"
        }
        return items
    }

    /// Expected items in the form of ``items(_:)``.
    static func items(_ expected: [String: ExpectedItem]) -> [String: String] {
        expected.mapValues { "\(canonical(fields: $0.fields)) @\($0.version.rawValue)" }
    }
}
