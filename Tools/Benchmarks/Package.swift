// swift-tools-version:6.2
import PackageDescription

/// The benchmark package: EventStore against SQLite (GRDB, FTS5) and raw LMDB on one workload,
/// and sync over loopback HTTP (`SyncServer` on its LMDB and PostgreSQL backends, and
/// `EventSync`'s `HTTPTransport`).
///
/// It is a nested package so that GRDB never becomes a dependency of the main package.
/// Build and run from the repository root with `./Tools/Benchmarks/run.sh` (`--short` for CI).
let swiftSettings: [SwiftSetting] = [
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
    .enableUpcomingFeature("InternalImportsByDefault"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0461-async-function-isolation.md
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "EventStoreBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "EventStore", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "evstore-bench",
            dependencies: [
                .product(name: "EventStore", package: "EventStore"),
                .product(name: "LMDB", package: "EventStore"),
                .product(name: "EventSync", package: "EventStore"),
                .product(name: "EventSyncService", package: "EventStore"),
                .product(name: "SyncPostgres", package: "EventStore"),
                .product(name: "SyncServer", package: "EventStore"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        )
    ]
)
