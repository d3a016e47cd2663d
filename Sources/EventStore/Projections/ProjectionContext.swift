import LMDB

/// A custom projection's access to its own databases, valid only inside
/// ``Projection/apply(_:in:)``. Do not store it.
public final class ProjectionContext {
    let transaction: WriteTransaction
    let databases: [String: Database]
    let projectionName: String

    init(transaction: WriteTransaction, databases: [String: Database], projectionName: String) {
        self.transaction = transaction
        self.databases = databases
        self.projectionName = projectionName
    }

    func database(_ name: String) throws -> Database {
        guard let database = databases["\(projectionName).\(name)"] else {
            throw EventStoreError(.projection, "projection \(projectionName) has no database \(name)")
        }
        return database
    }

    /// The value stored under `key` in the projection's database `database`.
    public func value(forKey key: [UInt8], in database: String) throws -> [UInt8]? {
        try transaction.value(forKey: key, in: self.database(database))
    }

    /// Stores `value` under `key` in the projection's database `database`.
    public func setValue(_ value: [UInt8], forKey key: [UInt8], in database: String) throws {
        try transaction.put(value, forKey: key, in: self.database(database))
    }

    /// Removes `key` from the projection's database `database`.
    public func removeValue(forKey key: [UInt8], in database: String) throws {
        try transaction.delete(key, in: self.database(database))
    }

    /// Adds `delta` to the counter stored under `key` (8-byte big-endian); a counter that reaches
    /// zero is removed, so equal counts always give equal bytes.
    public func add(_ delta: Int64, to key: String, in database: String) throws {
        let keyBytes = Array(key.utf8)
        let current = try value(forKey: keyBytes, in: database).map(Counter.decode) ?? 0
        let updated = current &+ delta
        if updated == 0 {
            try removeValue(forKey: keyBytes, in: database)
        } else {
            try setValue(Counter.encode(updated), forKey: keyBytes, in: database)
        }
    }
}

@available(*, unavailable)
extension ProjectionContext: Sendable {}

/// The encoding of projection counters: 8 bytes, big-endian two's complement.
public enum Counter {
    /// Encodes a counter value.
    public static func encode(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    /// Decodes a counter value; malformed bytes decode as 0.
    public static func decode(_ bytes: [UInt8]) -> Int64 {
        guard bytes.count == 8 else { return 0 }
        return bytes.withUnsafeBytes { Int64(bigEndian: $0.loadUnaligned(as: Int64.self)) }
    }
}
