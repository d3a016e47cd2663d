// libFuzzer target: the JSON parser (`Value(json:)`), the event JSON form (`Event(json:)`) and
// its canonical fast path (`CanonicalJSONReader`): the code that reads every push body the sync
// server receives and every page a client pulls. Built by Tools/Fuzz/run.sh.
@testable import EventStore

/// libFuzzer's entry point: checks one input, traps on a broken invariant, returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? Value(json: bytes) {
        // Canonical output parses back to the same value.
        let again = try? Value(json: value.jsonBytes())
        precondition(again == value, "JSON round trip changed the value")
    }
    let event = try? Event(json: bytes)
    if let event {
        let again = try? Event(json: event.jsonBytes())
        precondition(again == event, "event JSON round trip changed the event")
    }
    // The canonical reader (pulled pages' fast path) reads nothing the general decoder refuses,
    // and reads it the same.
    let canonical = bytes.withUnsafeBufferPointer { buffer -> Event? in
        var reader = CanonicalJSONReader(buffer, maxDepth: JSONSyntaxError.defaultMaxDepth + 2)
        guard let event = reader.event(depth: 1), reader.isAtEnd else { return nil }
        return event
    }
    if let canonical {
        precondition(canonical == event, "the canonical reader read an event differently")
        // What it reads is exactly the event's canonical JSON (checksums are taken over it).
        precondition(canonical.jsonBytes() == bytes, "the canonical reader read bytes that are not canonical")
    }
    return 0
}
