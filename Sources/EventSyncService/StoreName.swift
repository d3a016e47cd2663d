import EventSync

/// The rule for store names on a sync server: 1–64 bytes of ASCII letters, digits, `-`, `_` and
/// `.`, starting with a letter or a digit. Names map to directories under the data directory,
/// so the rule also keeps them from escaping it (no `/`, no `..`).
///
/// Names are matched exactly, but no store is created whose name differs from an existing
/// one's only by case (``sameIgnoringCase(_:_:)``): on a file system that ignores case the two
/// would be one directory, and every backend refuses it alike.
public enum StoreName {
    /// The longest name, in bytes.
    public static let maxLength = 64

    /// Whether `name` is a valid store name.
    ///
    /// ```swift
    /// StoreName.isValid("notes")      // true
    /// StoreName.isValid("../etc")     // false
    /// ```
    public static func isValid(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard let first = utf8.first, utf8.count <= maxLength, isAlphanumeric(first) else { return false }
        return utf8.allSatisfy {
            isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
        }
    }

    /// Throws ``SyncError/Code/invalidStoreName`` unless `name` is valid.
    public static func validate(_ name: String) throws {
        guard isValid(name) else {
            throw SyncError(
                .invalidStoreName,
                "store name \(name.debugDescription) must be 1-\(maxLength) letters, digits, '-', '_' or '.', starting with a letter or digit"
            )
        }
    }

    /// Whether two names differ at most by the case of their letters.
    public static func sameIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.lowercased() == rhs.lowercased()
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
