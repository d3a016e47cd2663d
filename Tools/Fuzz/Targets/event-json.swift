// libFuzzer target: the JSON parser (`Value(json:)`) and the event JSON form (`Event(json:)`),
// the code that reads every push body the sync server receives. Built by Tools/Fuzz/run.sh.
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
    if let event = try? Event(json: bytes) {
        let again = try? Event(json: event.jsonBytes())
        precondition(again == event, "event JSON round trip changed the event")
    }
    return 0
}
