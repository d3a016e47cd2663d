import EventStore

/// A parsed JSON object with typed member access; every failure is a
/// ``SyncError/Code/malformedBody`` naming the member.
struct JSONObject {
    let members: [String: Value]
    let context: String

    /// Field values nest at most 32 levels; a body adds up to four around them.
    static let bodyDepth = JSONSyntaxError.defaultMaxDepth + 4

    init(parsing json: [UInt8], context: String) throws {
        let value: Value
        do {
            value = try Value(json: json, maxDepth: JSONObject.bodyDepth)
        } catch let error as JSONSyntaxError {
            throw SyncError(.malformedBody, "\(context) is not valid JSON: \(error)", cause: error)
        }
        guard case .object(let members) = value else {
            throw SyncError(.malformedBody, "\(context) must be a JSON object")
        }
        self.members = members
        self.context = context
    }

    init(members: [String: Value], context: String) {
        self.members = members
        self.context = context
    }

    private func failure(_ name: String, _ expected: String) -> SyncError {
        SyncError(
            .malformedBody, "\(context): \"\(name)\" \(members[name] == nil ? "is missing" : "must be \(expected)")")
    }

    func string(_ name: String) throws -> String {
        guard case .string(let text)? = members[name] else { throw failure(name, "a string") }
        return text
    }

    func uint64(_ name: String) throws -> UInt64 {
        guard case .int(let number)? = members[name], number >= 0 else { throw failure(name, "a non-negative integer") }
        return UInt64(number)
    }

    func int(_ name: String) throws -> Int {
        guard case .int(let number)? = members[name], number >= 0, number <= Int64(Int.max) else {
            throw failure(name, "a non-negative integer")
        }
        return Int(number)
    }

    func digest(_ name: String) throws -> LogDigest {
        guard case .string(let text)? = members[name], let digest = LogDigest(hex: text) else {
            throw failure(name, "16 hex digits")
        }
        return digest
    }

    /// The mark signature under `name`, or `nil` when the object has none (an older server).
    func signature(_ name: String) throws -> MarkSignature? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value, let signature = MarkSignature(hex: text) else {
            throw failure(name, "16 hex digits")
        }
        return signature
    }

    func object(_ name: String) throws -> JSONObject {
        guard case .object(let members)? = members[name] else { throw failure(name, "an object") }
        return JSONObject(members: members, context: "\(context).\(name)")
    }
}
