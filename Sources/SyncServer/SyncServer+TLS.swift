public import EventSync
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SyncServer {
    /// The certificate chain and private key of a server that serves HTTPS itself, as PEM files.
    ///
    /// ```swift
    /// var configuration = try SyncServer.Configuration(
    ///     dataDirectory: "/var/lib/evstore", host: "0.0.0.0", port: 8443, tokensFile: "/etc/evstore/tokens")
    /// configuration.tls = .init(
    ///     certificateChainPath: "/etc/evstore/fullchain.pem", privateKeyPath: "/etc/evstore/privkey.pem")
    /// try await SyncServer(configuration: configuration).runService()
    /// ```
    ///
    /// The files are read when the server starts, before it opens a store or listens: a file that
    /// cannot be read, holds no certificate or no private key, or a key that is not the
    /// certificate's, stops the start with a ``EventSync/SyncError`` whose code is
    /// `SyncError.Code.invalidTLS` (`invalid-tls`). A renewed certificate takes effect at the next
    /// start.
    public struct TLS: Sendable, Hashable {
        /// The PEM file of the server's certificate, followed by the intermediate certificates
        /// that lead to a root the clients trust (a `fullchain.pem`).
        public var certificateChainPath: String
        /// The PEM file of the certificate's private key (PKCS #8, or the traditional EC or RSA
        /// form), unencrypted.
        public var privateKeyPath: String

        /// Creates a TLS configuration from the paths of its PEM files.
        public init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }

        /// The swift-nio-ssl server configuration of the files (TLS 1.2 and later), checked by
        /// making a TLS context of it (which refuses a key that is not the certificate's).
        ///
        /// - Throws: ``EventSync/SyncError`` with code `invalidTLS`, naming the file and what is
        ///   wrong with it.
        func serverConfiguration() throws -> TLSConfiguration {
            let chain = try TLS.load("certificate chain", at: certificateChainPath) { bytes in
                try NIOSSLCertificate.fromPEMBytes(bytes)
            }
            guard !chain.isEmpty else {
                throw SyncError(
                    .invalidTLS, "the TLS certificate chain \(certificateChainPath) holds no PEM certificate")
            }
            let key = try TLS.load("private key", at: privateKeyPath) { bytes in
                try NIOSSLPrivateKey(bytes: bytes, format: .pem)
            }
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            do {
                _ = try NIOSSLContext(configuration: configuration)
            } catch {
                throw SyncError(
                    .invalidTLS,
                    "the TLS private key \(privateKeyPath) does not go with the certificate chain \(certificateChainPath)",
                    cause: error)
            }
            return configuration
        }

        /// Reads the PEM file at `path` and decodes it with `decode`.
        private static func load<Value>(
            _ what: String, at path: String, _ decode: ([UInt8]) throws -> Value
        ) throws -> Value {
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else {
                throw SyncError(.invalidTLS, "cannot read the TLS \(what) \(path): \(String(cString: strerror(errno)))")
            }
            let bytes: [UInt8]
            do {
                bytes = [UInt8](try FileHandle(fileDescriptor: descriptor, closeOnDealloc: true).readToEnd() ?? Data())
            } catch {
                throw SyncError(.invalidTLS, "cannot read the TLS \(what) \(path)", cause: error)
            }
            do {
                return try decode(bytes)
            } catch {
                throw SyncError(.invalidTLS, "the TLS \(what) \(path) is not valid PEM", cause: error)
            }
        }
    }

    /// HTTP/1 as the server serves it (see ``SyncHTTP1Channel``), inside TLS when
    /// ``Configuration/tls`` is set.
    ///
    /// - Throws: ``EventSync/SyncError`` with code `invalidTLS` when the TLS files cannot be used.
    func httpServer() throws -> HTTPServerBuilder {
        let http1 = HTTPServerBuilder.syncHTTP1(
            configuration: .init(idleTimeout: SyncServer.timeAmount(configuration.idleTimeout)),
            writeTimeout: SyncServer.timeAmount(configuration.writeTimeout))
        guard let tls = configuration.tls else { return http1 }
        return try .tls(http1, tlsConfiguration: tls.serverConfiguration())
    }
}

extension SyncServer {
    /// `duration` in NIO's unit, at most about 292 years (a longer one, such as `.seconds(.max)`
    /// meant as "never", is that).
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .nanoseconds(seconds < 0 ? .min : .max) }
        let (total, carried) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return .nanoseconds(carried ? (seconds < 0 ? .min : .max) : total)
    }
}

extension SyncError.Code {
    /// The sync server's TLS certificate chain or private key cannot be used (see
    /// ``SyncServer/TLS``): the server does not start. Never sent over the wire.
    public static let invalidTLS = SyncError.Code(name: "invalid-tls", status: 0)
}
