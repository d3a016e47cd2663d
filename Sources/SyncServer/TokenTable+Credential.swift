import Crypto
import EventSync
public import EventSyncService

extension TokenTable {
    /// The credential a token stands for: the first 128 bits of its SHA-256 digest as hex, so
    /// that no token is ever stored with the replica ids it owns. Tokens are never operators
    /// (``EventSync/SyncCredential/isOperator``): every HTTP client pushes only its own events.
    ///
    /// ```swift
    /// let credential = tokens.credential(for: "9f2c4e1a7b")
    /// credential.id   // 32 hex digits, the same for the same token
    /// ```
    public func credential(for token: String) -> SyncCredential {
        let digest = SHA256.hash(data: Array(token.utf8))
        let id = digest.prefix(16).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return SyncCredential(id: "token:" + id)
    }
}
