import Foundation
import LMDB

/// A fresh directory for one test's environment, removed by ``remove()``.
struct TestDirectory: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "lmdb-test-" + UUID().uuidString
    }

    func appending(_ component: String) -> String { path + "/" + component }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs `body` with a new environment in its own directory, then deletes the directory.
func withEnvironment<T>(
    _ configure: (inout Environment.Configuration) -> Void = { _ in },
    _ body: (Environment, TestDirectory) throws -> T
) throws -> T {
    let directory = TestDirectory()
    defer { directory.remove() }
    var configuration = Environment.Configuration()
    configure(&configuration)
    let environment = try Environment.open(path: directory.path, configuration: configuration)
    return try body(environment, directory)
}

/// A big-endian 8-byte key, so byte order is numeric order.
func key(_ number: UInt64) -> [UInt8] {
    withUnsafeBytes(of: number.bigEndian, Array.init)
}

/// The number in a big-endian 8-byte key.
func number(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    precondition(bytes.count == 8)
    return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
}

/// The number in a big-endian 8-byte array.
func number(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBytes { number($0) }
}

/// UTF-8 bytes of a string.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A string from borrowed bytes.
func text(_ buffer: UnsafeRawBufferPointer?) -> String? {
    buffer.map { String(decoding: $0, as: UTF8.self) }
}

/// A test failure that is not an LMDB error.
struct Rollback: Error, Equatable {}
