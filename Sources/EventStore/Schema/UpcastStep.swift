/// One declarative change an upcaster makes to an event: what most model changes need, in a
/// form the store records, so that every tool (`evstore rebuild`, `verify`, `replay`,
/// `explain`) reads old events exactly as the application does.
///
/// ```swift
/// var notes = CollectionSchema("notes", version: 3)
/// notes.upcast(from: 1, [.renameField("title", to: "name")])
/// notes.upcast(from: 2, [.mapValues("priority", [.string("high"): .int(2)], otherwise: .int(1))])
/// ```
///
/// Steps run in order; each applies to puts and patches (a delete carries no fields) and leaves
/// an event that does not write the field alone, except ``setDefault(_:_:)``. Renaming,
/// removing and moving apply to a field's updates of an add-wins set or counter too (see
/// ``Event/updates``); the other steps change written values only.
public enum UpcastStep: Sendable, Hashable {
    /// The field is written under a new name.
    case renameField(String, to: String)
    /// A put that does not write the field writes `value` (patches are left alone: they change
    /// only what they name).
    case setDefault(String, Value)
    /// The field is no longer written.
    case removeField(String)
    /// The field's value is replaced by the one `mapping` gives it, or by `otherwise` (when
    /// given) for a value `mapping` does not name.
    case mapValues(String, [Value: Value], otherwise: Value? = nil)
    /// A string field is split at `separator` into the fields `parts` (in order; a missing part
    /// is an empty string, the last part keeps the rest), and no longer written.
    case splitField(String, separator: String, into: [String])
    /// The event's item moves to another collection (from this version on, the item lives
    /// there).
    ///
    /// With `atVersion`, the event enters that collection at that version of its schema, after
    /// the rest of this upcaster's steps, and is read through the collection's upcasters from
    /// there, as its own events of that version are; the upcasters of the collection it came
    /// from no longer apply. Without one, it enters at the collection's current version, after
    /// the moving collection's later upcasters, and none of the target's upcasters run: such a
    /// move into a collection whose schema has upcasters is refused when declared, and so is a
    /// version above the target's.
    ///
    /// ```swift
    /// var tasks = CollectionSchema("tasks", version: 2)
    /// tasks.upcast(from: 1, [.moveToCollection("archive", atVersion: 1)])
    /// var archive = CollectionSchema("archive", version: 2)
    /// archive.upcast(from: 1, [.renameField("title", to: "name")])   // moved tasks too
    /// ```
    case moveToCollection(String, atVersion: UInt16? = nil)

    /// Throws ``EventStoreError/Code/invalidName`` for a field or collection name the step
    /// would write that no event may carry: checked when the schema is declared, so that an
    /// upcaster never turns a valid event into an invalid one.
    func validateNames() throws {
        switch self {
        case .renameField(let old, let new): for name in [old, new] { try Validation.fieldName(name) }
        case .setDefault(let field, _), .removeField(let field), .mapValues(let field, _, _):
            try Validation.fieldName(field)
        case .splitField(let field, _, let parts): for name in [field] + parts { try Validation.fieldName(name) }
        case .moveToCollection(let collection, _): try Validation.collection(collection)
        }
    }

    /// Applies the step to `event`.
    func apply(to event: inout UpcastEvent) {
        guard event.operation != .delete || isMove || !event.updates.isEmpty else { return }
        switch self {
        case .renameField(let old, let new):
            event.renameField(old, to: new)
        case .setDefault(let field, let value):
            if event.operation == .put, event.fields[field] == nil { event.fields[field] = value }
        case .removeField(let field):
            event.fields[field] = nil
            event.updates[field] = nil
        case .mapValues(let field, let mapping, let otherwise):
            guard let value = event.fields[field] else { return }
            if let mapped = mapping[value] ?? otherwise { event.fields[field] = mapped }
        case .splitField(let field, let separator, let parts):
            guard case .string(let text)? = event.fields[field], !parts.isEmpty else { return }
            event.fields[field] = nil
            let pieces =
                separator.isEmpty
                ? [Substring(text)]
                : text.split(separator: separator, maxSplits: parts.count - 1, omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() {
                event.fields[part] = .string(index < pieces.count ? String(pieces[index]) : "")
            }
        case .moveToCollection(let collection, let version):
            event.collection = collection
            event.entryVersion = version
        }
    }

    private var isMove: Bool {
        if case .moveToCollection = self { return true }
        return false
    }
}

extension UpcastStep: CustomStringConvertible {
    /// The step in a few words: `rename title → name`, `map priority (2 values, otherwise 1)`.
    public var description: String {
        func text(_ value: Value) -> String { String(decoding: value.jsonBytes(), as: UTF8.self) }
        switch self {
        case .renameField(let old, let new): return "rename \(old) → \(new)"
        case .setDefault(let field, let value): return "default \(field) = \(text(value))"
        case .removeField(let field): return "remove \(field)"
        case .mapValues(let field, let mapping, let otherwise):
            return "map \(field) (\(mapping.count) values" + (otherwise.map { ", otherwise \(text($0))" } ?? "") + ")"
        case .splitField(let field, let separator, let parts):
            return "split \(field) at \(separator.debugDescription) into \(parts.joined(separator: ", "))"
        case .moveToCollection(let collection, let version):
            return "move to \(collection)" + (version.map { " at version \($0)" } ?? "")
        }
    }
}
