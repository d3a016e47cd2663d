/// Reads JSON that is in exactly the canonical form ``Event/writeJSON(into:)`` writes, without
/// building a tree of ``Value``s for the parts whose layout that form fixes.
///
/// It is the fast path of decoders whose input is almost always canonical (a pulled page comes
/// from a server that writes every event with ``Event/writeJSON(into:)``). Every read returns
/// `nil` where the bytes differ from the canonical form in any way (whitespace, another key
/// order, a leading zero, an escape where none is needed, malformed JSON); the caller then
/// decodes the whole input with the general decoder, which accepts every form the canonical one
/// does not and reports what is wrong. So it never accepts what the general decoder refuses,
/// nor reads anything differently: field values and `updates` are parsed by the same reader,
/// at the same nesting depth.
package struct CanonicalJSONReader {
    private var reader: JSONReader

    /// A reader at the start of `bytes`; `maxDepth` bounds nesting as in
    /// ``Value/init(json:maxDepth:)``.
    package init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        reader = JSONReader(bytes, maxDepth: maxDepth)
    }

    /// The offset of the next byte to read.
    package var offset: Int { reader.index }

    /// Whether every byte was read.
    package var isAtEnd: Bool { reader.index == reader.bytes.count }

    /// The next byte, if any.
    package var next: UInt8? { reader.index < reader.bytes.count ? reader.bytes[reader.index] : nil }

    /// Skips `text` if the bytes at the offset are exactly it.
    package mutating func skip(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard reader.index + count <= reader.bytes.count else { return false }
        for offset in 0..<count where reader.bytes[reader.index + offset] != text.utf8Start[offset] { return false }
        reader.index += count
        return true
    }

    /// A JSON string.
    package mutating func string() -> String? {
        guard next == UInt8(ascii: "\"") else { return nil }
        return try? reader.string()
    }

    /// A non-negative integer written in decimal without a sign or a leading zero, at most
    /// `Int64.max` (the general decoder's limit for a JSON integer).
    package mutating func integer() -> UInt64? {
        guard let value = digits(), value <= UInt64(Int64.max) else { return nil }
        // A fraction or an exponent makes it a double.
        if let byte = next, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            return nil
        }
        return value
    }

    /// A 64-bit stamp as a decimal string without a sign or a leading zero (as
    /// ``Event/writeJSON(into:)`` writes `hlc` and `base`).
    private mutating func stamp() -> HLCTimestamp? {
        guard skip("\""), let value = digits(), skip("\"") else { return nil }
        return HLCTimestamp(rawValue: value)
    }

    /// Decimal digits, at least one, without a leading zero, that fit 64 bits.
    private mutating func digits() -> UInt64? {
        let start = reader.index
        var value: UInt64 = 0
        while let byte = next, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
            reader.index += 1
        }
        let count = reader.index - start
        guard count > 0, count == 1 || reader.bytes[start] != UInt8(ascii: "0") else { return nil }
        return value
    }

    /// A replica id as 32 lowercase hex digits in a string.
    private mutating func origin() -> ReplicaID? {
        guard reader.index + 34 <= reader.bytes.count, skip("\"") else { return nil }
        let digits = UnsafeBufferPointer(rebasing: reader.bytes[reader.index..<reader.index + 32])
        for byte in digits {
            guard
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            else { return nil }
        }
        guard let high = hex64(parsing: digits.prefix(16)), let low = hex64(parsing: digits.suffix(16)) else {
            return nil
        }
        reader.index += 32
        return skip("\"") ? ReplicaID(high: high, low: low) : nil
    }

    /// An event in canonical form, whose object is at nesting level `depth` (1 for a document
    /// that is one event; 3 for the events of a pulled page).
    package mutating func event(depth: Int) -> Event? {
        guard depth <= reader.maxDepth, skip(#"{"base":"#), let base = stamp(), skip(#","collection":"#),
            let collection = string(), skip(#","fields":"#), next == UInt8(ascii: "{"),
            case .object(let fields)? = try? reader.value(depth: depth), skip(#","hlc":"#), let hlc = stamp(),
            skip(#","id":{"origin":"#), let origin = origin(), skip(#","seq":"#), let sequence = integer(),
            skip(#"},"item":"#), let item = string(), skip(#","op":""#)
        else { return nil }
        let operation: EventOperation
        if skip(#"put""#) {
            operation = .put
        } else if skip(#"patch""#) {
            operation = .patch
        } else if skip(#"delete""#) {
            operation = .delete
        } else {
            return nil
        }
        guard skip(#","schema":"#), let schema = integer(), schema <= UInt64(UInt16.max), skip(#","seq":"#),
            let seq = integer()
        else { return nil }
        var updates: [String: FieldUpdate] = [:]
        if skip(#","updates":"#) {
            guard next == UInt8(ascii: "{"), let value = try? reader.value(depth: depth),
                let decoded = try? Event.updates(jsonValue: value), !decoded.isEmpty
            else { return nil }
            updates = decoded
        }
        guard skip("}") else { return nil }
        return Event(
            seq: seq, id: EventID(origin: origin, sequence: sequence), hlc: hlc, base: base, collection: collection,
            item: item, operation: operation, fields: fields, schema: UInt16(schema), updates: updates)
    }
}
