import EventStore
import EventSync
import Foundation
import Logging
import SyncServer

/// `evstore demo`: a short story that shows the engine end to end in one process.
///
/// A sync server starts on a free loopback port; two replicas — "phone" and "laptop" — write
/// notes while offline (English and Korean), both edit the same note's title (a real conflict),
/// sync, and end with the same notes; the conflict is shown and explained, and offline searches
/// run on the phone. Every run starts from fresh replicas inside `directory`.
public struct Demo: Sendable {
    /// Where the demo keeps its server data and replicas.
    public var directory: String

    /// Creates the demo.
    public init(directory: String) { self.directory = directory }

    /// The default directory: `~/.evstore/demo`.
    public static var defaultDirectory: String {
        FileManager.default.homeDirectoryForCurrentUser.path + "/.evstore/demo"
    }

    /// Runs the story, printing it to `output`.
    public func run(output: Output) async throws {
        let fm = FileManager.default
        for name in ["server", "phone", "laptop"] { try? fm.removeItem(atPath: "\(directory)/\(name)") }
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)

        func heading(_ text: String) {
            output.line()
            output.line("── \(text) " + String(repeating: "─", count: max(0, 66 - text.count)))
        }

        heading("1. A sync server on loopback")
        let token = "demo-token"
        var configuration = SyncServer.Configuration(
            dataDirectory: "\(directory)/server", host: "127.0.0.1", port: 0,
            tokens: TokenTable([token: .allStores]))
        configuration.logger = Logger(label: "evstore.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let serverTask = Task { try await server.run() }
        defer { serverTask.cancel() }
        let port = try await server.waitUntilRunning()
        let url = "http://127.0.0.1:\(port)"
        output.line("server   \(url)  (data in \(directory)/server, store \"notes\")")

        let phone = try Store.open(at: "\(directory)/phone")
        let laptop = try Store.open(at: "\(directory)/laptop")
        defer {
            phone.close()
            laptop.close()
        }
        output.line("phone    replica \(phone.replicaID.description.prefix(8))…  \(directory)/phone")
        output.line("laptop   replica \(laptop.replicaID.description.prefix(8))…  \(directory)/laptop")
        let phoneSync = Synchronizer(store: phone, transport: HTTPTransport(baseURL: url, token: token, storeName: "notes"))
        let laptopSync = Synchronizer(store: laptop, transport: HTTPTransport(baseURL: url, token: token, storeName: "notes"))

        heading("2. The phone writes notes and syncs once")
        try await phone.append([
            .put("notes", id: "trip", fields: ["title": "Trip plan", "content": "Train at 9, pack the charger", "tags": ["travel"]]),
            .put("notes", id: "sync-design", fields: ["title": "Offline sync design", "content": "Event ranges, per-field merge on hybrid logical clocks", "tags": ["work"]]),
        ])
        output.line("phone: 2 notes written")
        let first = try await phoneSync.sync()
        output.line("phone ⇄ server: pushed \(first.pushed), pulled \(first.pulled)")
        let firstLaptop = try await laptopSync.sync()
        output.line("laptop ⇄ server: pushed \(firstLaptop.pushed), pulled \(firstLaptop.pulled) — the laptop now has both notes")

        heading("3. Both go offline and keep writing")
        try await phone.append([
            .put("notes", id: "meeting-ko", fields: ["title": "동기화 회의 메모", "content": "오프라인에서 동기화를 테스트했다. 충돌은 필드 단위로 병합된다.", "tags": ["work", "회의"]]),
            .patch("notes", id: "sync-design", fields: ["title": "Offline-first sync design"]),
            .patch("notes", id: "trip", fields: ["content": "Train at 9:40, pack the charger and passport"]),
        ])
        output.line("phone:  adds a Korean note, renames \"sync-design\" to \"Offline-first sync design\", edits the trip's content")
        try await Task.sleep(for: .milliseconds(20))
        try await laptop.append([
            .put("notes", id: "groceries", fields: ["title": "Groceries", "content": "Rice, kimchi, coffee beans", "tags": ["home"]]),
            .patch("notes", id: "sync-design", fields: ["title": "Sync design v2"]),
            .patch("notes", id: "trip", fields: ["tags": ["travel", "family"]]),
        ])
        output.line("laptop: adds \"Groceries\", renames \"sync-design\" to \"Sync design v2\" (a little later), tags the trip")
        let pending = try phoneSync.pendingCount()
        output.line("phone: \(pending) change\(pending == 1 ? "" : "s") waiting to sync")

        heading("4. Back online: sync both")
        let phonePush = try await phoneSync.sync()
        output.line("phone  ⇄ server: pushed \(phonePush.pushed), pulled \(phonePush.pulled)")
        let laptopRound = try await laptopSync.sync()
        output.line("laptop ⇄ server: pushed \(laptopRound.pushed), pulled \(laptopRound.pulled), conflicts \(laptopRound.conflicts)")
        let phoneRound = try await phoneSync.sync()
        output.line("phone  ⇄ server: pushed \(phoneRound.pushed), pulled \(phoneRound.pulled), conflicts \(phoneRound.conflicts)")

        heading("5. The merged notes (the same on both replicas)")
        let phoneItems = try phone.read { try $0.items(in: "notes", limit: 100).items }
        let laptopItems = try laptop.read { try $0.items(in: "notes", limit: 100).items }
        var table = Table(columns: ["note", "title", "tags", "content"])
        for item in phoneItems {
            let tags = item["tags"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
            table.add([item.id, item["title"]?.stringValue ?? "", tags, item["content"]?.stringValue ?? ""])
        }
        table.maxCellWidth = 34
        table.render().forEach(output.line)
        output.line(phoneItems == laptopItems ? "✔ phone and laptop hold identical notes" : "✘ the replicas differ")
        output.line("  \"trip\" kept both edits: the phone's content and the laptop's tags (merge is per field)")

        heading("6. The conflict, and why it resolved so")
        let conflicts = try laptop.read { try $0.conflicts(collection: "notes", item: "sync-design") }
        for record in conflicts {
            let winner = record.winner.event.origin == laptop.replicaID ? "laptop" : "phone"
            let loser = record.loser.event.origin == laptop.replicaID ? "laptop" : "phone"
            output.line("field \"\(record.field)\" of sync-design was edited on both replicas without either seeing the other:")
            output.line("  \(winner): \(Rendering.text(record.winner.value))  stamped \(record.winner.hlc)   ← kept")
            output.line("  \(loser): \(Rendering.text(record.loser.value))  stamped \(record.loser.hlc)")
            output.line("  the greater hybrid-logical-clock stamp wins, on every replica, whatever the order of arrival;")
            output.line("  the losing value stays in the log and in the conflicts list.")
        }
        if conflicts.isEmpty { output.line("(no conflict recorded)") }

        heading("7. Offline search on the phone")
        for query in ["sync", "kimc", "동기화", "충돌"] {
            let hits = try phone.search(SearchQuery(query, collection: "notes", limit: 3))
            let list = hits.map { "\($0.item.id) (\(String(format: "%.2f", $0.score)))" }.joined(separator: ", ")
            output.line("\(query + String(repeating: " ", count: max(0, 8 - Table.displayWidth(query)))) → \(list.isEmpty ? "no results" : list)")
        }
        output.line("  \"kimc\" matches as a prefix (search as you type); \"동기화\" finds \"동기화를\" inside the Korean note")

        heading("8. Explain: evstore explain --item notes/sync-design --field title")
        try Inspect.explain(store: laptop, collection: "notes", item: "sync-design", field: "title", format: .table, output: output)

        heading("9. Verify")
        for (name, store) in [("phone", phone), ("laptop", laptop)] {
            let report = try store.verify()
            output.line("\(name): \(report.isConsistent ? "ok" : "FAILED") — \(report.eventsChecked) events; items and search index equal a rebuild from the log")
        }
        output.line()
        output.line("Inspect further: evstore dump \(directory)/phone --items · evstore dump \(directory)/laptop --conflicts")
        serverTask.cancel()
        _ = await serverTask.result
    }
}
