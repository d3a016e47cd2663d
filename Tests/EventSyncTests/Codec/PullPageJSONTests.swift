import EventStore
import EventStoreTestSupport
import Foundation
import Testing

@testable import EventSync

/// A pulled page's JSON: the canonical form is read without a JSON tree and checksummed over its
/// bytes as received; every other form is read as the general parser reads it.
struct PullPageJSONTests {
    static let origin = ReplicaID(hex: "0123456789abcdef0123456789abcdef")!

    /// Events with every kind of value, escapes, non-ASCII text, nested values, updates to sets
    /// and counters, and each operation.
    static let events: [Event] = {
        let stamp = HLCTimestamp(physical: 1_800_000_000_000, logical: 3)
        let fields: [[String: Value]] = [
            ["title": "Groceries", "rank": 3, "weight": 2.0],
            [:],
            [
                "text": "line\nbreak \"quoted\" \\ tab\t \u{1} 동기화 🎉", "null": .null, "flag": false,
                "big": .int(.max), "small": .int(.min), "exp": 1e300, "zero": .double(-0.0),
                "list": [1, 2.5, "x", [true]], "object": ["inner": ["deep": 1]],
            ],
            ["é": "accent in a key"],
        ]
        var events: [Event] = []
        for (index, operation) in [EventOperation.put, .patch, .delete, .put, .patch].enumerated() {
            events.append(
                Event(
                    seq: UInt64(10 + index), id: EventID(origin: origin, sequence: UInt64(index)),
                    hlc: HLCTimestamp(rawValue: stamp.rawValue + UInt64(index)),
                    base: index == 0 ? .zero : stamp, collection: index == 3 ? "a \"quoted\" collection" : "notes",
                    item: "n\(index)", operation: operation,
                    fields: operation == .delete ? [:] : fields[index % fields.count], schema: UInt16(index)))
        }
        events.append(
            Event(
                seq: 20, id: EventID(origin: origin, sequence: 9), hlc: stamp, collection: "notes", item: "n9",
                operation: .patch, fields: ["title": "with updates"],
                updates: [
                    "tags": FieldUpdate(
                        add: ["a", 1], remove: [.init(element: "b", seen: [EventID(origin: origin, sequence: 2)])]),
                    "count": .increment(-4),
                ]))
        return events
    }()

    static func page(_ events: [Event] = PullPageJSONTests.events) -> PullPage {
        PullPage(
            events: events, next: events.last?.seq ?? 99, head: 99, epoch: "epoch-1", digest: LogDigest(rawValue: 42),
            checksum: PageChecksum(events: events))
    }

    static func text(_ page: PullPage) -> String { String(decoding: page.jsonBytes(), as: UTF8.self) }

    @Test(arguments: [(0, false), (1, false), (6, false), (0, true), (6, true)])
    func aCanonicalPageIsReadDirectlyAndChecksummedAsReceived(count: Int, signed: Bool) throws {
        var page = Self.page(Array(Self.events.prefix(count)))
        if signed { page.signature = MarkSignature(rawValue: 0x0123_4567_89ab_cdef) }
        let decoded = try PullPage(json: page.jsonBytes())
        #expect(decoded == page)
        // Only the direct reading sets it: the page took that path.
        #expect(decoded.receivedChecksum == page.checksum)
        #expect(try PullPage(parsing: page.jsonBytes()) == page)
        try Synchronizer.verify(decoded, after: count == 0 ? page.next : 0)
    }

    /// Forms a server might write that are not the canonical one: each is read by the general
    /// parser, to the same page, and passes verification on the events' canonical checksum.
    @Test(arguments: [
        ("whitespace", #"{"checksum":"#, #"{ "checksum" :"#),
        ("key order", #"{"base":"#, #"{"seq":SEQ,"base":"#),
        ("hlc as a number", #""hlc":"117964800000000003""#, #""hlc":117964800000000003"#),
        (
            "uppercase origin", #""origin":"0123456789abcdef0123456789abcdef""#,
            #""origin":"0123456789ABCDEF0123456789abcdef""#
        ),
        ("escaped letter", #""item":"n0""#, #""item":"\u006e0""#),
        ("schema with an exponent", #""schema":0"#, #""schema":0e0"#),
        ("page key order", #","head":99,"next":"#, #","next":NEXT,"head":99,"ignored":"#),
    ])
    func anotherFormIsReadByTheGeneralParser(name: String, canonical: String, variant: String) throws {
        let page = Self.page()
        var text = Self.text(page)
        var replacement = variant.replacingOccurrences(of: "SEQ", with: "10")
        replacement = replacement.replacingOccurrences(of: "NEXT", with: String(page.next))
        guard let range = text.range(of: canonical) else {
            Issue.record("\(name): the canonical text has no \(canonical)")
            return
        }
        text.replaceSubrange(range, with: replacement)
        if name == "key order" {
            // The seq moved to the front: drop it at the end of the first event.
            text = text.replacingOccurrences(of: #","schema":0,"seq":10}"#, with: #","schema":0}"#)
        }
        if name == "schema with an exponent" {
            // Not an integer: both readers refuse it, with the general parser's error.
            #expect(throws: SyncError.self) { try PullPage(json: Array(text.utf8)) }
            return
        }
        let decoded = try PullPage(json: Array(text.utf8))
        #expect(decoded == page, "\(name)")
        // Read by the general parser: the bytes are not the canonical ones.
        #expect(decoded.receivedChecksum == nil, "\(name)")
        try Synchronizer.verify(decoded, after: 0)
    }

    @Test func aChangedEventOrChecksumFailsVerification() throws {
        let page = Self.page()
        var decoded = try PullPage(json: page.jsonBytes())
        decoded.events[1].fields["rank"] = 4
        // Changing the events drops the checksum of the bytes they were read from.
        #expect(decoded.receivedChecksum == nil)
        #expect(throws: SyncError.self) { try Synchronizer.verify(decoded, after: 0) }

        // The bytes of an event changed in transit (a valid event still): its bytes' checksum no
        // longer matches, nor does its canonical one.
        let text = Self.text(page).replacingOccurrences(of: #""item":"n1""#, with: #""item":"n7""#)
        let altered = try PullPage(json: Array(text.utf8))
        #expect(altered.receivedChecksum != nil && altered.receivedChecksum != page.checksum)
        #expect(throws: SyncError.self) { try Synchronizer.verify(altered, after: 0) }

        var wrong = page
        wrong.checksum = PageChecksum(rawValue: page.checksum.rawValue ^ 1)
        let misdeclared = try PullPage(json: wrong.jsonBytes())
        #expect(throws: SyncError.self) { try Synchronizer.verify(misdeclared, after: 0) }
    }

    /// A server that writes an event's values in another form and declares the checksum of the
    /// bytes it sent, not of the events' canonical JSON: the page is refused however the rest of
    /// it is spaced, as the general parser refuses it.
    @Test(arguments: [
        ("a double not in its shortest form", #""weight":2.0"#, #""weight":2.00"#),
        ("an exponent", #""weight":2.0"#, #""weight":2e0"#),
        ("minus zero", #""rank":3"#, #""rank":-0"#),
        ("an escaped letter", #""title":"Groceries""#, #""title":"\u0047roceries""#),
        ("an escaped slash", #""title":"Groceries""#, #""title":"Groceries\/""#),
        ("a short escape the writer does not use", #""title":"Groceries""#, #""title":"Groceries\b""#),
        (
            "fields out of order", #"{"rank":3,"title":"Groceries","weight":2.0}"#,
            #"{"title":"Groceries","rank":3,"weight":2.0}"#
        ),
        ("whitespace in the fields", #"{"rank":3,"#, #"{"rank": 3,"#),
        ("an escaped item id", #""item":"n0""#, #""item":"\u006e0""#),
        ("an uppercase id in an update", #""seen":["0123456789abcdef"#, #""seen":["0123456789ABCDEF"#),
    ])
    func anEventInAnotherFormWithTheChecksumOfItsBytesIsRefused(name: String, canonical: String, variant: String)
        throws
    {
        // The events as the server spells them, one of them otherwise, and the checksum of
        // those bytes as it declares it.
        let page = Self.page()
        var spelled: [[UInt8]] = page.events.map { $0.jsonBytes() }
        guard
            let index = spelled.firstIndex(where: { String(decoding: $0, as: UTF8.self).contains(canonical) })
        else {
            Issue.record("\(name): no event's canonical text has \(canonical)")
            return
        }
        var event = String(decoding: spelled[index], as: UTF8.self)
        event.replaceSubrange(event.range(of: canonical)!, with: variant)
        spelled[index] = Array(event.utf8)
        var hash = FNV1a()
        for bytes in spelled {
            hash.combine(bytes: bytes)
            hash.combine(byte: 0x0A)
        }
        let declared = PageChecksum(rawValue: hash.state)
        let text = String(
            decoding: PullPage.jsonBytes(
                eventsJSON: Array(spelled.joined(separator: [UInt8(ascii: ",")])), next: page.next, head: page.head,
                epoch: page.epoch, digest: page.digest, checksum: declared, signature: nil), as: UTF8.self)
        #expect(declared != PageChecksum(events: try PullPage(parsing: Array(text.utf8)).events), "\(name)")
        for body in [text, " " + text] {
            let page = try PullPage(json: Array(body.utf8))
            #expect(page.receivedChecksum == nil, "\(name)")
            #expect(throws: SyncError.self, "\(name)") { try Synchronizer.verify(page, after: 0) }
        }
    }

    /// Random damage to a canonical page: the direct reading and the general parser agree on
    /// every input (both refuse it, or both read the same page), and the direct reading takes a
    /// page only when its events' bytes are their canonical JSON (so the checksum of the bytes
    /// received is the events' own).
    @Test func randomDamageIsReadAsTheGeneralParserReadsIt() throws {
        let bytes = Self.page().jsonBytes()
        var random = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &random)
        var generator = SeededGenerator(seed: seed)
        let alphabet = Array(#"{}[]",:0123456789.eE-+ \nabcfnrtu\\"#.utf8) + [0x00, 0xC3, 0xFF]
        var readDirectly = 0
        for round in 0..<6_000 {
            var damaged = bytes
            for _ in 0...Int(generator.next() % 3) {
                let position = Int(generator.next() % UInt64(damaged.count))
                let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                switch generator.next() % 3 {
                case 0: damaged[position] = byte
                case 1: damaged.insert(byte, at: position)
                default: damaged.remove(at: position)
                }
            }
            let general = try? PullPage(parsing: damaged)
            let page = try? PullPage(json: damaged)
            #expect(page == general, "seed \(seed), round \(round)")
            guard let page else { continue }
            // Read directly only when the bytes are the events' canonical JSON.
            if let received = page.receivedChecksum {
                readDirectly += 1
                #expect(received == PageChecksum(events: page.events), "seed \(seed), round \(round)")
            }
        }
        // Damage inside a string or a field value often leaves the page canonical.
        #expect(readDirectly > 0, "seed \(seed)")
    }
}
