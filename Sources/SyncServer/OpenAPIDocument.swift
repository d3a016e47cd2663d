import Foundation

/// The OpenAPI 3 document of protocol v1 (`openapi.json`, a resource of this module), served at
/// `GET /openapi.json`.
enum OpenAPIDocument {
    /// The document's bytes, or `nil` when the resource cannot be found.
    static let bytes: [UInt8]? = {
        for url in candidates {
            if let data = try? Data(contentsOf: url) { return [UInt8](data) }
        }
        return nil
    }()

    /// Where the resource may be: the resource bundle beside the executable (how SwiftPM lays out
    /// builds), then the source tree (development builds moved elsewhere).
    private static var candidates: [URL] {
        let bundleName = "EventStore_SyncServer.resources"
        var urls: [URL] = [
            Bundle.main.bundleURL.appendingPathComponent(bundleName).appendingPathComponent("openapi.json")
        ]
        if let executable = Bundle.main.executableURL {
            urls.append(
                executable.deletingLastPathComponent().appendingPathComponent(bundleName)
                    .appendingPathComponent("openapi.json"))
        }
        urls.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("openapi.json"))
        return urls
    }
}
