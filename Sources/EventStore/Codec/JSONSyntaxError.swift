/// Malformed JSON: what is wrong, where in the document, and at which byte.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The deepest nesting of arrays and objects the decoders accept by default: 32.
    public static let defaultMaxDepth = 32

    /// The byte offset where the problem was found.
    public var offset: Int
    /// What is wrong.
    public var message: String
    /// Where the problem is, as keys and indexes from the top of the document: `fields.count`,
    /// `events[3].fields.tags[0]`, `["odd key"]`; empty at the top level.
    public var path: String

    /// Creates an error.
    public init(offset: Int, message: String, path: String = "") {
        self.offset = offset
        self.message = message
        self.path = path
    }

    /// `message at byte N`, or `message at PATH (byte N)`.
    public var description: String {
        path.isEmpty ? "\(message) at byte \(offset)" : "\(message) at \(path) (byte \(offset))"
    }

    /// The error as seen from the object holding it under `key`.
    func inside(key: String) -> JSONSyntaxError {
        let isPlain =
            !key.isEmpty && key.utf8.count <= 64
            && key.utf8.allSatisfy { byte in
                byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z"))
            }
        let component = isPlain ? key : "[\(String(key.prefix(64)).debugDescription)]"
        return prefixed(with: component)
    }

    /// The error as seen from the array holding it at `index`.
    func inside(index: Int) -> JSONSyntaxError {
        prefixed(with: "[\(index)]")
    }

    /// A key is joined to what follows with a dot (`fields.count`), unless a subscript follows.
    private func prefixed(with component: String) -> JSONSyntaxError {
        var error = self
        error.path = path.isEmpty || path.hasPrefix("[") ? component + path : component + "." + path
        return error
    }
}
