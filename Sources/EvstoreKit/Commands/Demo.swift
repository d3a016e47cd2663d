import EventStore
import EventSync
import Foundation
import Logging
import SyncServer

/// `evstore demo`: a short story that shows the engine end to end, in one process.
///
/// A sync server starts on a free loopback port; two replicas — "phone" and "laptop" — write
/// notes while offline (English and Korean), both change the same note's title (a real
/// conflict), sync, and end with the same notes; the conflict is shown and explained, offline
/// searches run on the phone, and `explain` shows the conflicted field's history. Every run
/// starts from fresh replicas inside ``directory``.
package struct Demo: Sendable {
    /// Where the demo keeps its server data and replicas (`server`, `phone`, `laptop`).
    package var directory: String

    /// Creates the demo.
    package init(directory: String) { self.directory = directory }

    /// The file that marks a directory as the demo's own (its stores are replaced on each run).
    static let marker = ".evstore-demo"

    /// The default directory: `evstore-demo` in the system's temporary directory.
    package static var defaultDirectory: String {
        NSTemporaryDirectory() + "evstore-demo"
    }

    /// Runs the story, printing it to `output`.
    package func run(output: Output) async throws {
        let manager = FileManager.default
        // The default directory and one this demo made before (it has the marker) are the demo's;
        // anything else named like its stores is someone's data, left alone.
        let base = self.directory
        let marker = "\(base)/\(Demo.marker)"
        let taken = ["server", "phone", "laptop"].filter { manager.fileExists(atPath: "\(base)/\($0)") }
        if !taken.isEmpty && !manager.fileExists(atPath: marker) && base != Demo.defaultDirectory {
            throw ToolError(
                "\(base) already holds \(taken.joined(separator: ", ")), which this demo did not make: give "
                    + "another --dir (the demo replaces its server, phone and laptop directories on every run)")
        }
        for name in taken { try manager.removeItem(atPath: "\(base)/\(name)") }
        try manager.createDirectory(atPath: base, withIntermediateDirectories: true)
        _ = manager.createFile(atPath: marker, contents: Data("evstore demo\n".utf8))
        let directory = URL(fileURLWithPath: self.directory).standardizedFileURL.path
        let story = Story(output: output)

        output.line("EventStore demo: a notes app on a phone and a laptop, offline edits, one sync server.")

        story.heading("1. Start a sync server and two replicas")
        let token = "demo-token"
        var configuration = SyncServer.Configuration(
            dataDirectory: "\(directory)/server", host: "127.0.0.1", port: 0, tokens: TokenTable([token: .allStores]))
        configuration.logger = Logger(label: "evstore.demo", factory: { _ in SwiftLogNoOpLogHandler() })
        let server = SyncServer(configuration: configuration)
        let serverTask = Task { try await server.run() }
        defer { serverTask.cancel() }
        let port = try await server.waitUntilRunning()
        let url = "http://127.0.0.1:\(port)"

        let phone = try Store.open(at: "\(directory)/phone")
        let laptop = try Store.open(at: "\(directory)/laptop")
        defer {
            phone.close()
            laptop.close()
        }
        let names = ReplicaNames([phone.replicaID: "phone", laptop.replicaID: "laptop"])
        story.rows([
            ["server", url, "\(directory)/server"],
            ["phone", "replica \(phone.replicaID.description.prefix(8))…", "\(directory)/phone"],
            ["laptop", "replica \(laptop.replicaID.description.prefix(8))…", "\(directory)/laptop"],
        ])
        let phoneSync = Synchronizer(
            store: phone, transport: HTTPTransport(baseURL: url, token: token, storeName: "notes"))
        let laptopSync = Synchronizer(
            store: laptop, transport: HTTPTransport(baseURL: url, token: token, storeName: "notes"))

        story.heading("2. The phone writes two notes and syncs; so does the laptop")
        try await phone.append([
            .put(
                "notes", id: "trip",
                fields: ["title": "Trip plan", "content": "Train at 9, pack the charger", "tags": ["travel"]]),
            .put(
                "notes", id: "sync-design",
                fields: [
                    "title": "Offline sync design", "content": "Event ranges, per-field merge on hybrid logical clocks",
                    "tags": ["work"],
                ]),
        ])
        story.rows([
            ["phone", "+ trip", "\"Trip plan\""],
            ["phone", "+ sync-design", "\"Offline sync design\""],
        ])
        let first = try await phoneSync.sync()
        let firstLaptop = try await laptopSync.sync()
        story.rows([
            ["phone  ⇄ server", "pushed \(first.pushed), pulled \(first.pulled)"],
            [
                "laptop ⇄ server", "pushed \(firstLaptop.pushed), pulled \(firstLaptop.pulled)",
                "the laptop has both notes now",
            ],
        ])

        story.heading("3. Both go offline and keep editing")
        try await phone.append([
            .put(
                "notes", id: "meeting-ko",
                fields: [
                    "title": "동기화 회의 메모", "content": "오프라인에서 동기화를 테스트했다. 충돌은 필드 단위로 병합된다.", "tags": ["work", "회의"],
                ]),
            .patch("notes", id: "sync-design", fields: ["title": "Offline-first sync design"]),
            .patch("notes", id: "trip", fields: ["content": "Train at 9:40, pack the charger and passport"]),
        ])
        try await Task.sleep(for: .milliseconds(20))
        try await laptop.append([
            .put(
                "notes", id: "groceries",
                fields: ["title": "Groceries", "content": "Rice, kimchi, coffee beans", "tags": ["home"]]),
            .patch("notes", id: "sync-design", fields: ["title": "Sync design v2"]),
            .patch("notes", id: "trip", fields: ["tags": ["travel", "family"]]),
        ])
        story.rows([
            ["phone", "+ meeting-ko", "\"동기화 회의 메모\" (a note in Korean)"],
            ["phone", "~ sync-design", "title → \"Offline-first sync design\""],
            ["phone", "~ trip", "content → \"Train at 9:40, pack the charger and passport\""],
            ["laptop", "+ groceries", "\"Groceries\""],
            ["laptop", "~ sync-design", "title → \"Sync design v2\"   ← the same field, a little later"],
            ["laptop", "~ trip", "tags → [\"travel\", \"family\"]"],
        ])
        let phonePending = try phoneSync.pendingCount()
        let laptopPending = try laptopSync.pendingCount()
        output.line("(\(phonePending) changes wait on the phone, \(laptopPending) on the laptop)")

        story.heading("4. Back online: both sync")
        let phonePush = try await phoneSync.sync()
        let laptopRound = try await laptopSync.sync()
        let phoneRound = try await phoneSync.sync()
        func conflicts(_ report: SyncReport) -> String {
            report.conflicts == 0 ? "" : "\(report.conflicts) conflict\(report.conflicts == 1 ? "" : "s") found"
        }
        story.rows([
            ["phone  ⇄ server", "pushed \(phonePush.pushed), pulled \(phonePush.pulled)", conflicts(phonePush)],
            ["laptop ⇄ server", "pushed \(laptopRound.pushed), pulled \(laptopRound.pulled)", conflicts(laptopRound)],
            ["phone  ⇄ server", "pushed \(phoneRound.pushed), pulled \(phoneRound.pulled)", conflicts(phoneRound)],
        ])

        story.heading("5. The merged notes")
        let phoneItems = try phone.read { try $0.items(in: "notes", limit: 100).items }
        let laptopItems = try laptop.read { try $0.items(in: "notes", limit: 100).items }
        var table = Table(columns: ["note", "title", "tags", "content"])
        table.maxCellWidth = 34
        for item in phoneItems {
            let tags = item["tags"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
            table.add([item.id, item["title"]?.stringValue ?? "", tags, item["content"]?.stringValue ?? ""])
        }
        table.render().forEach(output.line)
        output.line()
        let same = try phoneItems == laptopItems && Inspect.diff(phone, laptop).isEqual
        output.line(same ? "✔ phone and laptop hold identical notes (and identical logs)" : "✘ the replicas differ")
        output.line("  \"trip\" kept both edits, the phone's content and the laptop's tags: the merge is per field.")

        story.heading("6. The conflict, and why it resolved so")
        let records = try laptop.read { try $0.conflicts(collection: "notes", item: "sync-design") }
        if let record = records.first {
            let writes = [record.loser, record.winner]
            story.paragraph(
                "Both replicas changed the \(record.field) of \"sync-design\" while offline, and neither saw the other's edit: a conflict. The two edits:"
            )
            output.line()
            story.rows(
                writes.map { write in
                    [
                        "  " + names.label(write.event.origin), Rendering.text(write.value),
                        "written at \(Story.timeOfDay(write.hlc))" + (write == record.winner ? "   ← kept" : ""),
                    ]
                })
            output.line()
            story.paragraph(
                "Every replica keeps the write with the later hybrid-logical-clock stamp (wall time, then a counter, then the replica id), so all replicas pick the same winner, whatever order the edits arrive in, without asking each other. The \(names.label(record.loser.event.origin))'s title is not thrown away: it stays in the log and in the conflict list (evstore\u{00A0}dump\u{00A0}--conflicts)."
            )
        } else {
            output.line("(no conflict was recorded)")
        }

        story.heading("7. Offline search on the phone (no server involved)")
        var searches = Table(columns: ["query", "best match", "score"])
        for query in ["sync", "kimc", "동기화", "충돌"] {
            let hits = try phone.search(SearchQuery(query, collection: "notes", limit: 3))
            if let best = hits.first {
                let title = best.item["title"]?.stringValue ?? ""
                searches.add(["\"\(query)\"", "\(best.item.id)  \"\(title)\"", String(format: "%.2f", best.score)])
            } else {
                searches.add(["\"\(query)\"", "no results", ""])
            }
        }
        searches.render().forEach(output.line)
        output.line()
        story.paragraph(
            "\"kimc\" matches \"kimchi\" as a prefix (search as you type); \"동기화\" finds the Korean note, whose text has \"동기화를\", and \"충돌\" finds \"충돌은\"."
        )

        story.heading("8. Explain: why does the title say what it says?")
        output.line("$ evstore explain \(directory)/laptop --item notes/sync-design --field title")
        output.line()
        try Inspect.explain(
            store: laptop, collection: "notes", item: "sync-design", field: "title", format: .table, names: names,
            output: output)

        story.heading("9. Verify both replicas")
        for (name, store) in [("phone", phone), ("laptop", laptop)] {
            let report = try store.verify()
            let verdict = report.isConsistent ? "✔ \(name): ok," : "✘ \(name): FAILED,"
            output.line(
                "\(verdict) \(report.eventsChecked) events; items and search index equal a rebuild from the log")
        }

        output.line()
        output.line("Look around:")
        output.line("  evstore dump \(directory)/laptop --items")
        output.line("  evstore replay \(directory)/laptop --item notes/trip --step")
        output.line("  evstore diff \(directory)/phone \(directory)/laptop")
        output.line("  evstore search \(directory)/phone 동기화")
        serverTask.cancel()
        _ = await serverTask.result
    }
}

/// Headings and aligned rows for the demo.
struct Story {
    let output: Output

    func heading(_ text: String) {
        output.line()
        output.line("── \(text) " + String(repeating: "─", count: max(3, 76 - Table.displayWidth(text))))
    }

    func rows(_ rows: [[String]]) {
        var table = Table(columns: rows.first.map { $0.map { _ in "" } } ?? [])
        table.maxCellWidth = 70
        rows.forEach { table.add($0) }
        table.render().dropFirst(2).forEach(output.line)
    }

    /// Prints `text` wrapped at 84 terminal columns.
    func paragraph(_ text: String) {
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && Table.displayWidth(line) + 1 + Table.displayWidth(String(word)) > 84 {
                output.line(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { output.line(line) }
    }

    /// `10:39:41.595` from a stamp.
    static func timeOfDay(_ hlc: HLCTimestamp) -> String {
        let text = Rendering.stamp(hlc)
        guard let t = text.firstIndex(of: "T"), let z = text.firstIndex(of: "Z") else { return text }
        return String(text[text.index(after: t)..<z])
    }
}
