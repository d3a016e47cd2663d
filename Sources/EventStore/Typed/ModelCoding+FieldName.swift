import Synchronization

extension ModelCoding {
    /// The names of the key paths named so far: describing a key path takes about 20,000
    /// instructions, several times a typed query's own work per condition. Only stored
    /// properties are kept, so that the table holds at most the program's key paths.
    private static let fieldNames = Mutex<[StoredPropertyPath: String]>([:])

    /// A key path to a stored property, as a key of ``fieldNames``. Key paths are not `Sendable`
    /// because a subscript path holds its arguments; a stored property's path holds none and
    /// never changes, so it can be shared between threads.
    private struct StoredPropertyPath: Hashable, @unchecked Sendable {
        let keyPath: AnyKeyPath
    }

    /// What ``CodingKeyProbe`` found for each model type probed so far (`nil`: the probe failed).
    private static let probes = Mutex<[ObjectIdentifier: CodingKeyProbe?]>([:])

    /// The field of `Root`'s items that `keyPath` names: the coding key its stored property is
    /// stored under (`\Task.dueDate` → `due_date` with `case dueDate = "due_date"`; its own name
    /// with synthesized coding keys).
    ///
    /// - Throws: ``EventStoreError/Code/typeMismatch`` for a computed property, a nested,
    ///   optional-chained or subscript path, and for a property that `Root` does not decode from a
    ///   field of its own. When `Root`'s decoding cannot be probed (see ``CodingKeyProbe``), the
    ///   property's name is taken as its field.
    static func field<Root: Decodable, V>(of keyPath: KeyPath<Root, V>) throws -> String {
        try names(of: keyPath).field
    }

    /// The stored property `keyPath` names and the field it is stored under (see
    /// ``field(of:)``), found once each.
    static func names<Root: Decodable, V>(of keyPath: KeyPath<Root, V>) throws -> (property: String, field: String) {
        guard let property = fieldName(of: keyPath) else {
            throw EventStoreError(
                .typeMismatch, "the key path \(keyPath) does not name a stored property of \(Root.self)")
        }
        let type = ObjectIdentifier(Root.self)
        let probe: CodingKeyProbe?
        if let known = probes.withLock({ $0[type] }) {
            probe = known
        } else {
            probe = CodingKeyProbe.probe(Root.self)
            probes.withLock { $0[type] = .some(probe) }
        }
        guard let probe else { return (property, property) }
        guard let field = probe.field(of: property) else {
            throw EventStoreError(
                .typeMismatch,
                "the key path \(keyPath) names the property \(property), which \(Root.self) does not decode under its "
                    + "own name, and no coding key of it (\(probe.keys.sorted().joined(separator: ", "))) could be matched "
                    + "to it: name the field in an untyped Query")
        }
        return (property, field)
    }

    /// The name of the stored property a key path names (`\Note.title` → `title`), or `nil` for
    /// a computed property, a nested, optional-chained or subscript path.
    static func fieldName<Root, V>(of keyPath: KeyPath<Root, V>) -> String? {
        let key = StoredPropertyPath(keyPath: keyPath)
        if let known = fieldNames.withLock({ $0[key] }) { return known }
        guard let name = describedName(of: keyPath) else { return nil }
        fieldNames.withLock { $0[key] = name }
        return name
    }

    /// The property name of a key path, from its description (`\Note.title` → `title`).
    private static func describedName(of keyPath: AnyKeyPath) -> String? {
        let description = "\(keyPath)"
        guard let dot = description.firstIndex(of: ".") else { return nil }
        let name = description[description.index(after: dot)...]
        // A stored property prints as its name; a computed one (`<computed 0x… (Int)>` on Linux),
        // a nested, optional-chained or subscript path does not, and the identity path prints
        // as `self`.
        guard name != "self", let first = name.unicodeScalars.first, first == "_" || first.properties.isAlphabetic,
            name.unicodeScalars.allSatisfy({
                $0 == "_" || $0.properties.isAlphabetic || $0.properties.numericType != nil
            })
        else { return nil }
        return String(name)
    }
}
