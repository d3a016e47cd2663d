// swift-tools-version:6.2
import PackageDescription

/// Settings applied to every Swift target.
let swiftSettings: [SwiftSetting] = [
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
    .enableUpcomingFeature("InternalImportsByDefault"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0461-async-function-isolation.md
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    // Debug builds can inject LMDB failures (map full, readers full, I/O errors) in tests.
    .define("ENABLE_MOCKING", .when(configuration: .debug)),
]

let package = Package(
    name: "EventStore",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "LMDB", targets: ["LMDB"]),
        .library(name: "EventStore", targets: ["EventStore"]),
        .library(name: "EventSync", targets: ["EventSync"]),
        .library(name: "EventSyncService", targets: ["EventSyncService"]),
        .library(name: "SyncPostgres", targets: ["SyncPostgres"]),
        .library(name: "SyncServer", targets: ["SyncServer"]),
        .executable(name: "evstore", targets: ["evstore"]),
    ],
    // An app that embeds the engine alone resolves and builds only swift-log: depend on this
    // package with `traits: []`, or `traits: ["Sync"]` for the sync client (see README).
    traits: [
        .trait(name: "Sync", description: "The sync client: EventSync's HTTP transport (AsyncHTTPClient, SwiftNIO)."),
        .trait(
            name: "Server",
            description:
                "The sync server, its PostgreSQL backend and the evstore tool (Hummingbird, ServiceLifecycle, postgres-nio, "
                + "swift-crypto, swift-nio-ssl, swift-prometheus, ArgumentParser).",
            enabledTraits: ["Sync"]),
        .default(enabledTraits: ["Sync", "Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        .target(
            name: "EventStore",
            dependencies: ["LMDB", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "EventSync",
            dependencies: [
                "EventStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Sync"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Sync"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Sync"])),
                .product(name: "NIOFoundationCompat", package: "swift-nio", condition: .when(traits: ["Sync"])),
            ]
        ),
        .target(
            name: "EventSyncService",
            dependencies: ["EventStore", "EventSync", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "SyncPostgres",
            dependencies: [
                "EventStore", "EventSync", "EventSyncService", .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ]
        ),
        .target(
            name: "SyncServer",
            dependencies: [
                "EventStore", "EventSync", "EventSyncService",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
            ],
            resources: [.copy("openapi.json")]
        ),
        .target(
            name: "EvstoreKit",
            dependencies: [
                "EventStore", "EventSync", "EventSyncService", "SyncPostgres", "SyncServer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Sync"])),
            ]
        ),
        .executableTarget(
            name: "evstore",
            dependencies: [
                "EvstoreKit", "EventStore", "EventSync", "EventSyncService", "SyncServer",
                .product(
                    name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/evstore"
        ),
        .executableTarget(
            name: "evstore-crash", dependencies: ["EventStore", "EventSync", "EventSyncService"],
            path: "Tools/evstore-crash"),
        .target(name: "EventStoreTestSupport", dependencies: ["EventStore"], path: "Tests/EventStoreTestSupport"),
        .target(
            name: "SyncTestSupport",
            dependencies: [
                "EventStore", "EventSync", "EventSyncService", "SyncPostgres", "SyncServer",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Sync"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
            ],
            path: "Tests/SyncTestSupport"
        ),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
        .testTarget(name: "EventStoreTests", dependencies: ["EventStore", "EventStoreTestSupport", "LMDB"]),
        .testTarget(
            name: "EventSyncTests",
            dependencies: [
                "EventSync", "EventSyncService", "SyncServer", "EventStoreTestSupport", "SyncTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SyncPostgresTests",
            dependencies: [
                "EventStore", "EventSync", "EventSyncService", "SyncPostgres", "EventStoreTestSupport",
                "SyncTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SyncServerTests",
            dependencies: [
                "SyncServer", "EventSync", "EventSyncService", "EventStoreTestSupport", "SyncTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Sync"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "ResilienceTests",
            dependencies: [
                "EventStore", "EventSync", "EventSyncService", "SyncPostgres", "SyncServer", "EventStoreTestSupport",
                "SyncTestSupport", "evstore", "evstore-crash", "LMDB",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Sync"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            exclude: ["README.md"]
        ),
        .testTarget(
            name: "EvstoreTests",
            dependencies: [
                "EvstoreKit", "EventStoreTestSupport", "SyncTestSupport", "evstore", "EventStore", "EventSyncService",
                "SyncPostgres", "LMDB", "SyncServer", .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Server"])),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
