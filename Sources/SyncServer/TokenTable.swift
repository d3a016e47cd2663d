import EventSync
import EventSyncService
import Foundation

/// Which bearer tokens may use which stores, usually read from a token file.
///
/// The file is plain text, one token a line: the token, then the stores it grants, separated
/// by spaces or tabs; `*` grants every store; `#` starts a comment.
///
/// ```text
/// # token                 stores
/// 9f2c4e1a7b              notes tasks
/// admin-3b8e0d            *
/// ```
///
/// ```swift
/// let tokens = try TokenTable(contentsOfFile: "/etc/evstore/tokens")
/// tokens.grant(for: "9f2c4e1a7b")?.allows("notes")   // true
/// ```
public struct TokenTable: Sendable, Hashable {
    /// What a token grants.
    public enum Grant: Sendable, Hashable {
        /// Every store (`*`).
        case allStores
        /// The named stores.
        case stores(Set<String>)

        /// Whether the grant covers `store`.
        public func allows(_ store: String) -> Bool {
            switch self {
            case .allStores: true
            case .stores(let names): names.contains(store)
            }
        }
    }

    /// A line of a token file that could not be read.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The 1-based line number.
        public var line: Int
        /// What is wrong.
        public var message: String

        /// `line N: message`.
        public var description: String { "line \(line): \(message)" }
    }

    private var grants: [String: Grant]

    /// Creates a table from tokens and their grants.
    ///
    /// ```swift
    /// let tokens = TokenTable(["t0k3n": .stores(["notes"]), "admin": .allStores])
    /// ```
    public init(_ grants: [String: Grant] = [:]) {
        self.grants = grants
    }

    /// Parses the text of a token file.
    ///
    /// - Throws: ``ParseError`` for a token without stores, an invalid store name or a token
    ///   listed twice.
    public init(parsing text: String) throws {
        var grants: [String: Grant] = [:]
        var lines: [String: Int] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var words: [Substring] = []
            for word in rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }) {
                if word.hasPrefix("#") { break }
                words.append(word)
            }
            guard let token = words.first else { continue }
            let stores = words.dropFirst().map(String.init)
            guard !stores.isEmpty else {
                throw ParseError(line: number, message: "the token grants no store (write `TOKEN STORE…` or `TOKEN *`)")
            }
            if let first = lines[String(token)] {
                throw ParseError(line: number, message: "the token is already listed on line \(first)")
            }
            lines[String(token)] = number
            if stores.contains("*") {
                grants[String(token)] = .allStores
                continue
            }
            for store in stores where !StoreName.isValid(store) {
                throw ParseError(line: number, message: "\(store.debugDescription) is not a valid store name")
            }
            grants[String(token)] = .stores(Set(stores))
        }
        self.grants = grants
    }

    /// Reads and parses a token file.
    ///
    /// - Throws: ``ParseError`` (its message names the file), or the file system's error.
    public init(contentsOfFile path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        do {
            try self.init(parsing: text)
        } catch let error as ParseError {
            throw ParseError(line: error.line, message: "\(path): \(error.message)")
        }
    }

    /// What `token` grants, or `nil` for an unknown token.
    public func grant(for token: String) -> Grant? { grants[token] }

    /// The number of tokens.
    public var count: Int { grants.count }
}
