/// A handle to a named database inside an ``Environment``.
///
/// Handles are opened once (see ``WriteTransaction/openDatabase(named:options:)``) and then shared
/// freely between transactions and threads.
public struct Database: Sendable, Hashable, CustomStringConvertible {
    let handle: UInt32
    /// The database's name in the environment.
    public let name: String

    init(handle: UInt32, name: String) {
        self.handle = handle
        self.name = name
    }

    /// The database's name.
    public var description: String { name }
}
