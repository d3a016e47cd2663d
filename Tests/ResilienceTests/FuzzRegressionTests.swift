import EventStore
import EventStoreTestSupport
import Testing

@testable import EventStore

/// Inputs found by the fuzz targets in Tools/Fuzz, kept as regression tests.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// event-binary: a stored event whose field holds a NaN double (bytes 0x59 + 7FF…/FFF… payload)
    /// decodes without error. NaN breaks `Value` equality and hashing (the convergence checks
    /// compare values) and has no JSON form, so a damaged log should be reported as corrupt.
    static let nanDoubleEvent: [UInt8] = [
        0x01, 0x01, 0x00, 0x01, 0x23, 0xFF, 0xFF, 0xFF, 0xFF, 0x25, 0x00, 0x04, 0x72, 0x61, 0x74, 0x69,
        0x6F, 0x59, 0x3F, 0xD8, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x04, 0x04,
        0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
        0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04,
        0x04, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x04, 0xFF, 0xFF, 0xFF,
        0xFF, 0xEB, 0x01, 0x01, 0xFF,
    ]

    @Test("binary decoder: a NaN double in a stored event is reported as corrupt")
    func nanDoubleInStoredEvent() throws {
        let error = #expect(throws: EventStoreError.self) {
            try Event(decoding: FuzzRegressionTests.nanDoubleEvent, seq: 1)
        }
        #expect(error?.code == .corrupt)
    }

    /// event-binary: an item record whose field names are not in order (here one name twice):
    /// the full decoder keeps the last of the two, while finding a field by name stopped at the
    /// first. The in-place view now refuses names out of order as corrupt.
    static let fieldsOutOfOrderRecord: [UInt8] = [
        0x01, 0x01, 0x00, 0x01, 0x23, 0xFF, 0xFF, 0xBF, 0xFF, 0x25, 0x00, 0x26, 0x6F, 0x61, 0x74, 0x69,
        0x00, 0x72, 0x59, 0xD8, 0x3F, 0x00, 0x03, 0xF7, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x04, 0x04,
        0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x06, 0x00, 0x04, 0x6A, 0x00,
        0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x27, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x60, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0xFF,
    ]

    @Test("item record view: field names out of order are reported as corrupt")
    func fieldNamesOutOfOrder() throws {
        let error = #expect(throws: EventStoreError.self) {
            try FuzzRegressionTests.fieldsOutOfOrderRecord.withUnsafeBytes { try ItemRecordView($0).fields() }
        }
        #expect(error?.code == .corrupt)
        #expect(throws: EventStoreError.self) {
            try FuzzRegressionTests.fieldsOutOfOrderRecord.withUnsafeBytes { try ItemRecordView($0).indexed() }
        }
    }

    /// segment: a posting list whose count and frequency are varints longer than they need be
    /// (`0x81 0x00` for 1). A merge copies runs of live postings as stored, so its bytes differ
    /// from a list built posting by posting; what they decode to must not.
    static let nonMinimalVarintList: [UInt8] = [0x00, 0x81, 0x00, 0x01, 0x80, 0xD0, 0xA8, 0x00, 0x00]

    @Test("segment merge: a list with varints longer than needed merges into the same postings")
    func nonMinimalVarintsMergeIntoTheSamePostings() throws {
        try FuzzRegressionTests.nonMinimalVarintList.withUnsafeBytes { list in
            let postings = try PostingList.Decoder.decodeAll(list)
            var merged = PostingList.Builder(positions: false)
            #expect(try merged.append(liveOf: list) { _ in true } == 1)
            var bytes = ByteWriter()
            merged.encode(into: &bytes)
            #expect(try bytes.bytes.withUnsafeBytes { try PostingList.Decoder.decodeAll($0) } == postings)
            #expect(bytes.bytes != PostingList.encoded(postings), "the run is copied as stored")
        }
    }

    @Test("public API: non-finite doubles are refused before they reach the log")
    func nonFiniteDoublesRefused() async throws {
        try await withTemporaryStore { store in
            for value in [Double.nan, .infinity, -.infinity] {
                do {
                    _ = try await store.put("notes", id: "x", fields: ["v": .double(value)])
                    Issue.record("\(value) was accepted")
                } catch let error as EventStoreError {
                    #expect(error.code == .invalidEvent, "\(value): \(error)")
                }
            }
            #expect(try store.head() == 0)
        }
    }
}
