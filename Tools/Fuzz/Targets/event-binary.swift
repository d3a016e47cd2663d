// libFuzzer target: the binary event decoder (the value format of the `events` database), the
// item-state decoder and the in-place view of item records (the `items` database), the
// configuration record decoder (with its collection schemas and upcast steps; the `meta`
// database) and the declared indexes' run directory (the `state` database) and blocks
// (`indexes`: the input's first byte is the length of the block's first key, which follows,
// then the value). Built by Tools/Fuzz/run.sh.
@testable import EventStore

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: checks one input, traps on a broken invariant, returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventBinary(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let event = try? Event(decoding: bytes, seq: 7) {
        // Whatever decodes must re-encode to something that decodes to the same event (compared
        // as bytes: a NaN double is never == itself; see FuzzRegressionTests for that finding).
        let again = try? Event(decoding: event.encoded(), seq: 7)
        precondition(again?.encoded() == event.encoded(), "binary round trip changed the event")
    }
    if let record = bytes.withUnsafeBytes({ try? ItemRecord(decoding: $0) }) {
        precondition(
            (try? record.encoded().withUnsafeBytes { try ItemRecord(decoding: $0) })?.encoded() == record.encoded(),
            "item record round trip changed the record")
    }
    bytes.withUnsafeBytes { buffer in
        // The in-place view of an item record shows what decoding the record shows, each field
        // found by name with and without its index of field places.
        guard let view = try? ItemRecordView(buffer), let fields = try? view.fields() else { return }
        if let record = try? ItemRecord(decoding: buffer) {
            precondition(fields == record.state.values, "the record view's fields differ from the decoded state")
        }
        let indexed = try? view.indexed()
        for (name, value) in fields {
            precondition((try? view.value(name)) == value, "a field found by walking differs from the fields")
            if let indexed {
                precondition((try? indexed.value(name)) == value, "a field found by its place differs from the fields")
            }
        }
    }
    if let record = try? ConfigurationRecord(decoding: bytes) {
        precondition(record.encoded() == bytes, "a configuration record decoded from bytes that are not its encoding")
    }
    if let directory = bytes.withUnsafeBytes({ try? IndexRunDirectory(decoding: $0) }) {
        precondition(directory.runs.allSatisfy { $0.id < directory.nextRun }, "a run id at or above the next run id")
        precondition(Set(directory.runs.map(\.id)).count == directory.runs.count, "a run listed twice")
        let again = directory.encoded().withUnsafeBytes { try? IndexRunDirectory(decoding: $0) }
        precondition(again == directory, "index run directory round trip changed it")
    }
    if let length = bytes.first, Int(length) < bytes.count {
        bytes.withUnsafeBytes { buffer in
            let first = UnsafeRawBufferPointer(rebasing: buffer[1..<1 + Int(length)])
            let value = UnsafeRawBufferPointer(rebasing: buffer[(1 + Int(length))...])
            let block = IndexRunBlock.Decoded()
            guard (try? IndexRunBlock.decode(first: first, value: value, into: block)) != nil else { return }
            precondition(block.key(0).elementsEqual(first), "a block starts with its key's entry")
            for index in block.entries.indices.dropFirst() {
                precondition(
                    compareBytes(block.key(index - 1), block.key(index)) < 0, "a block's keys must grow")
            }
            precondition(
                (try? IndexRunBlock.entryCount(value)) == block.entries.count, "entry count differs from the entries")
        }
    }
    return 0
}

/// With `EVENTSTORE_FUZZ_SEEDS=DIR`, writes a few well-formed encoded events to DIR first (how
/// Tools/Fuzz/Corpus/event-binary was made).
@_cdecl("LLVMFuzzerInitialize")
public func initializeEventBinary(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    guard let directory = getenv("EVENTSTORE_FUZZ_SEEDS").map({ String(cString: $0) }) else { return 0 }
    let origin = ReplicaID(hex: "0123456789abcdef0123456789abcdef")!
    let samples: [Event] = [
        Event(
            id: EventID(origin: origin, sequence: 1), hlc: HLCTimestamp(physical: 1_800_000_000_000, logical: 0),
            collection: "notes", item: "n1", operation: .put,
            fields: [
                "title": "Sync design", "tags": ["work", "동기화"], "rank": 3, "done": false, "ratio": 0.5, "none": .null,
                "meta": ["a": ["b": 1]],
            ]),
        Event(
            id: EventID(origin: origin, sequence: 2), hlc: HLCTimestamp(physical: 1_800_000_000_001, logical: 7),
            base: HLCTimestamp(physical: 1_800_000_000_000, logical: 0), collection: "notes", item: "n1",
            operation: .patch,
            fields: ["content": "메모 kiwi"], schema: 2),
        Event(
            id: EventID(origin: origin, sequence: 3), hlc: HLCTimestamp(physical: 1_800_000_000_002, logical: 0),
            collection: "tasks", item: "t", operation: .delete),
        // Updates of an add-wins set and a counter (event format 2).
        Event(
            id: EventID(origin: origin, sequence: 4), hlc: HLCTimestamp(physical: 1_800_000_000_003, logical: 0),
            collection: "notes", item: "n1", operation: .patch, fields: ["title": "t"],
            updates: [
                "tags": FieldUpdate(
                    add: ["work"], remove: [.init(element: "draft", seen: [EventID(origin: origin, sequence: 1)])]),
                "views": .increment(-3),
            ]),
    ]
    for (index, event) in samples.enumerated() {
        let bytes = event.encoded()
        let file = fopen(directory + "/seed-\(index)", "wb")
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        let json = event.jsonBytes()
        let jsonFile = fopen(directory + "/seed-\(index).json", "wb")
        _ = json.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, jsonFile) }
        fclose(jsonFile)
    }
    return 0
}
