import EventStore

/// A small JSON output buffer.
struct JSONOut {
    var bytes: [UInt8] = []

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ text: String) {
        Value.string(text).writeJSON(into: &bytes)
    }

    mutating func number<T: BinaryInteger>(_ value: T) {
        bytes.append(contentsOf: String(value).utf8)
    }
}
