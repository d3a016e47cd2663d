import EventStore

/// Which of a deployment's databases holds a store: partition `hash(name) mod count`, where the
/// hash is FNV-1a (64-bit) over the name's UTF-8 bytes.
///
/// The rule never changes, and each database records its place (``PostgresSchema``), so that
/// every server process, tool and later version finds a store in the same database, and a
/// process configured with the databases in another order, or with another number of them, is
/// refused instead of creating stores in the wrong one.
enum PostgresPartitioning {
    /// The partition of store `name` among `count`.
    static func partition(of name: String, count: Int) -> Int {
        guard count > 1 else { return 0 }
        var hash = FNV1a()
        for byte in name.utf8 { hash.combine(byte: byte) }
        return Int(hash.state % UInt64(count))
    }
}

/// A database's place in its deployment: partition `index` of `count`.
struct PostgresPartition: Sendable, Hashable, CustomStringConvertible {
    var index: Int
    var count: Int

    /// A database that holds every store of its deployment.
    static let whole = PostgresPartition(index: 0, count: 1)

    var description: String { count == 1 ? "a database holding every store" : "partition \(index + 1) of \(count)" }
}
