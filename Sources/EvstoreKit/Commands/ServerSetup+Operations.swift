import Foundation
package import SyncServer

extension ServerSetup {
    /// What is wrong with `--tls-cert` and `--tls-key`, or `nil` when both or neither are given.
    ///
    /// ```swift
    /// ServerSetup.tlsProblem(certificate: "cert.pem", key: nil)
    /// // "--tls-cert needs --tls-key: give both (HTTPS) or neither (plain HTTP)"
    /// ```
    package static func tlsProblem(certificate: String?, key: String?) -> String? {
        switch (certificate, key) {
        case (nil, nil), (.some, .some): nil
        case (.some, nil): "--tls-cert needs --tls-key: give both (HTTPS) or neither (plain HTTP)"
        case (nil, .some): "--tls-key needs --tls-cert: give both (HTTPS) or neither (plain HTTP)"
        }
    }

    /// The server's TLS configuration from `--tls-cert` and `--tls-key`: `nil` for plain HTTP.
    ///
    /// The files are read when the server starts (see ``SyncServer/SyncServer/TLS``).
    ///
    /// - Throws: ``ToolError``, a usage error (exit status 64) when only one of the two is given.
    package static func tls(certificate: String?, key: String?) throws -> SyncServer.TLS? {
        if let problem = tlsProblem(certificate: certificate, key: key) { throw ToolError.usage(problem) }
        guard let certificate, let key else { return nil }
        return SyncServer.TLS(certificateChainPath: certificate, privateKeyPath: key)
    }

    /// Reads the token `GET /metrics` requires from `--metrics-token-file`: the file's text
    /// without surrounding white space.
    ///
    /// - Throws: ``ToolError`` (exit status 1) when the file cannot be read, is empty, or the
    ///   token holds white space (it must fit in `Authorization: Bearer TOKEN`).
    package static func metricsToken(fromFile path: String) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ToolError("cannot read the metrics token file \(path): \(error.localizedDescription)")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
            throw ToolError(
                "the metrics token file \(path) must hold one token (no spaces), not \(token.isEmpty ? "nothing" : "several words")"
            )
        }
        return token
    }
}
