import Foundation
import Testing

@testable import EventStore

/// The coding keys a model's properties are stored under, found by probing its decoding.
struct CodingKeyProbeTests {
    enum Priority: String, Codable, CaseIterable { case low, high }

    struct Renamed: Codable {
        struct Place: Codable { var city: String }
        var id: UUID
        var title: String
        var dueDate: Date
        var isDone: Bool
        var rank: Int16
        var score: Double?
        var priority: Priority
        var place: Place
        var tags: [String]
        var cached: Int = 0

        enum CodingKeys: String, CodingKey {
            case id, title = "name", dueDate = "due_date", isDone = "done", rank, score = "points", priority, place
            case tags
        }
    }

    /// Synthesized keys: every property is stored under its name.
    struct Plain: Codable {
        var title: String
        var done: Bool
        var count: Int
    }

    enum Status: String, Codable { case open, closed }

    /// Its enum property is not `CaseIterable`: the probe cannot make one, and knows nothing.
    struct Unprobeable: Codable {
        var status: Status
        var label: String
        enum CodingKeys: String, CodingKey { case status, label = "text" }
    }

    /// A comment that holds its parent comment: the probe must not decode parents for ever.
    final class Comment: Codable {
        var text: String
        var parent: Comment?
        var replies: [Comment]
        enum CodingKeys: String, CodingKey { case text = "body", parent, replies }
    }

    struct Linked: Codable {
        var reference: UUID
        var link: URL
        var blob: Data
        var next: [Linked]?
        enum CodingKeys: String, CodingKey { case reference = "ref", link = "url", blob = "bytes", next }
    }

    /// Reads and drops a `version` key; `loadedAt` is not decoded.
    struct Loaded: Codable {
        var title: String
        var loadedAt = Date()
        enum CodingKeys: String, CodingKey { case title, version }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decode(String.self, forKey: .title)
            _ = try container.decodeIfPresent(Int.self, forKey: .version)
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(title, forKey: .title)
        }
    }

    @Test func typesThatHoldThemselvesAndFoundationValuesAreProbed() throws {
        #expect(try ModelCoding.field(of: \Comment.text) == "body")
        #expect(try ModelCoding.field(of: \Comment.parent) == "parent")
        #expect(try ModelCoding.field(of: \Linked.reference) == "ref")
        #expect(try ModelCoding.field(of: \Linked.link) == "url")
        #expect(try ModelCoding.field(of: \Linked.blob) == "bytes")
        #expect(try ModelCoding.field(of: \Linked.next) == "next")
        // A key the model reads and drops is not taken for a property it does not decode.
        #expect(try ModelCoding.field(of: \Loaded.title) == "title")
        #expect(throws: EventStoreError.self) { try ModelCoding.field(of: \Loaded.loadedAt) }
    }

    @Test func renamedPropertiesNameTheirCodingKeys() throws {
        #expect(try ModelCoding.field(of: \Renamed.title) == "name")
        #expect(try ModelCoding.field(of: \Renamed.dueDate) == "due_date")
        #expect(try ModelCoding.field(of: \Renamed.score) == "points")
        #expect(try ModelCoding.field(of: \Renamed.rank) == "rank")
        #expect(try ModelCoding.field(of: \Renamed.priority) == "priority")
        #expect(try ModelCoding.field(of: \Renamed.place) == "place")
        #expect(try ModelCoding.field(of: \Renamed.tags) == "tags")
        // A Bool cannot carry a value of its own: the model is decoded again with only "done" true.
        #expect(try ModelCoding.field(of: \Renamed.isDone) == "done")
        #expect(try ModelCoding.field(of: \Plain.title) == "title")
        #expect(try ModelCoding.field(of: \Plain.done) == "done")
    }

    @Test func aPropertyTheModelDoesNotDecodeIsRefused() {
        do {
            _ = try ModelCoding.field(of: \Renamed.cached)
            Issue.record("a property outside the coding keys named a field")
        } catch let error as EventStoreError {
            #expect(error.code == .typeMismatch)
            #expect(error.message.contains("cached") && error.message.contains("due_date"), "\(error.message)")
            #expect(error.message.contains("untyped Query"), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
        #expect(throws: EventStoreError.self) { try ModelCoding.field(of: \Renamed.place.city) }
    }

    @Test func aModelTheProbeCannotDecodeKeepsItsPropertyNames() throws {
        #expect(CodingKeyProbe.probe(Unprobeable.self) == nil)
        #expect(try ModelCoding.field(of: \Unprobeable.label) == "label")
        let probe = try #require(CodingKeyProbe.probe(Renamed.self))
        #expect(probe.keys == Set(Renamed.CodingKeys.allKeys))
    }
}

extension CodingKeyProbeTests.Renamed.CodingKeys {
    static var allKeys: [String] {
        ["id", "name", "due_date", "done", "rank", "points", "priority", "place", "tags"]
    }
}
