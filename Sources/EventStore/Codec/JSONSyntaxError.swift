/// Malformed JSON: what is wrong and at which byte.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The deepest nesting of arrays and objects the decoders accept by default: 32.
    public static let defaultMaxDepth = 32

    /// The byte offset where the problem was found.
    public var offset: Int
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// `message at byte N`.
    public var description: String { "\(message) at byte \(offset)" }
}
