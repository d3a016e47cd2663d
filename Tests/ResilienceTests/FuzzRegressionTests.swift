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
