import Foundation

/// The path of an executable product of this package built for the tests: next to the test
/// bundle (SwiftPM builds a test target's executable dependencies first), else in
/// `.build/debug` of the package.
public func builtExecutable(named name: String) -> String {
    let manager = FileManager.default
    var directories: [URL] = []
    if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        directories.append(bundle.bundleURL.deletingLastPathComponent())
    }
    // This file is Tests/EventStoreTestSupport/BuiltExecutable.swift.
    let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    directories.append(packageRoot.appendingPathComponent(".build/debug"))
    for directory in directories {
        let candidate = directory.appendingPathComponent(name).path
        if manager.isExecutableFile(atPath: candidate) { return candidate }
    }
    return packageRoot.appendingPathComponent(".build/debug/" + name).path
}
