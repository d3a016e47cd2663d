/// Reads JSON that is in exactly the canonical form ``Event/writeJSON(into:)`` writes, without
/// building a tree of ``Value``s for the parts whose layout that form fixes.
///
/// It is the fast path of decoders whose input is almost always canonical (a pulled page comes
/// from a server that writes every event with ``Event/writeJSON(into:)``). An event it reads is
/// byte for byte the canonical JSON of the event it returns, so a checksum over the bytes read
/// is the checksum of the event's canonical form. Every read returns `nil` where the bytes differ
/// from that form in any way (whitespace, another key order, a leading zero, `-0`, a double not
/// in its shortest form, an escape other than the writer's, an `updates` member the writer
/// would write otherwise, malformed JSON); the caller then decodes the whole input with the
/// general decoder, which accepts every form the canonical one does not and reports what is
/// wrong. Strings and numbers are decoded by the same reader as there, and values are nested to
/// the same depth, so it never accepts what the general decoder refuses, nor reads anything
/// differently.
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

    /// A string escaped exactly as ``JSONWriter/string(_:into:)`` escapes it: `\"`, `\\`, `\n`,
    /// `\r`, `\t`, and `\u00xx` (lowercase) for the other control characters; nothing else.
    private mutating func canonicalString() -> String? {
        guard next == UInt8(ascii: "\"") else { return nil }
        let bytes = reader.bytes
        var index = reader.index + 1
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\") {
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    // Only a control character other than the three with a short form.
                    guard index + 6 <= bytes.count, bytes[index + 2] == UInt8(ascii: "0"),
                        bytes[index + 3] == UInt8(ascii: "0"), let high = Self.lowercaseHex(bytes[index + 4]),
                        let low = Self.lowercaseHex(bytes[index + 5]), high < 2
                    else { return nil }
                    let scalar = high << 4 | low
                    guard scalar != 0x0A, scalar != 0x0D, scalar != 0x09 else { return nil }
                    index += 6
                default: return nil
                }
            } else {
                index += 1
            }
        }
        return try? reader.string()
    }

    private static func lowercaseHex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// A value in the canonical form ``JSONWriter/value(_:into:)`` writes, found at nesting level
    /// `depth` (as ``JSONReader/value(depth:)`` counts it): no whitespace, object keys in
    /// increasing byte order, integers without a leading zero or `-0`, doubles in their shortest
    /// form.
    private mutating func canonicalValue(depth: Int) -> Value? {
        guard let byte = next else { return nil }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth + 1 <= reader.maxDepth else { return nil }
            reader.index += 1
            var members: [String: Value] = [:]
            if skip("}") { return .object(members) }
            var previous: String?
            repeat {
                guard let key = canonicalString(), previous.map({ utf8Less($0, key) }) ?? true, skip(":"),
                    let value = canonicalValue(depth: depth + 1)
                else { return nil }
                members[key] = value
                previous = key
            } while skip(",")
            guard skip("}") else { return nil }
            return .object(members)
        case UInt8(ascii: "["):
            guard depth + 1 <= reader.maxDepth else { return nil }
            reader.index += 1
            var values: [Value] = []
            if skip("]") { return .array(values) }
            repeat {
                guard let value = canonicalValue(depth: depth + 1) else { return nil }
                values.append(value)
            } while skip(",")
            guard skip("]") else { return nil }
            return .array(values)
        case UInt8(ascii: "\""): return canonicalString().map(Value.string)
        // Not ternaries: `Value` is `ExpressibleByNilLiteral`, so a ternary typed by a value would
        // turn the `nil` meant for "not canonical" into `.null`.
        case UInt8(ascii: "t"):
            guard skip("true") else { return nil }
            return .bool(true)
        case UInt8(ascii: "f"):
            guard skip("false") else { return nil }
            return .bool(false)
        case UInt8(ascii: "n"):
            guard skip("null") else { return nil }
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = reader.index
            guard let number = try? reader.number() else { return nil }
            let text = UnsafeBufferPointer(rebasing: reader.bytes[start..<reader.index])
            switch number {
            case .int(let integer):
                // The reader refuses leading zeros; `-0` is the one other spelling of an integer.
                guard integer != 0 || text.count == 1 else { return nil }
                return number
            case .double(let double):
                var shortest = double.description
                guard shortest.withUTF8({ $0.elementsEqual(text) }) else { return nil }
                return number
            default: return nil
            }
        default: return nil
        }
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
        guard digits.allSatisfy({ Self.lowercaseHex($0) != nil }), let high = hex64(parsing: digits.prefix(16)),
            let low = hex64(parsing: digits.suffix(16))
        else {
            return nil
        }
        reader.index += 32
        return skip("\"") ? ReplicaID(high: high, low: low) : nil
    }

    /// An event in canonical form, whose object is at nesting level `depth` (1 for a document
    /// that is one event; 3 for the events of a pulled page).
    package mutating func event(depth: Int) -> Event? {
        guard depth <= reader.maxDepth, skip(#"{"base":"#), let base = stamp(), skip(#","collection":"#),
            let collection = canonicalString(), skip(#","fields":"#), next == UInt8(ascii: "{"),
            case .object(let fields)? = canonicalValue(depth: depth), skip(#","hlc":"#), let hlc = stamp(),
            skip(#","id":{"origin":"#), let origin = origin(), skip(#","seq":"#), let sequence = integer(),
            skip(#"},"item":"#), let item = canonicalString(), skip(#","op":""#)
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
        var updatesText: Range<Int>?
        if skip(#","updates":"#) {
            let start = reader.index
            guard next == UInt8(ascii: "{"), let value = canonicalValue(depth: depth),
                let decoded = try? Event.updates(jsonValue: value), !decoded.isEmpty
            else { return nil }
            updates = decoded
            updatesText = start..<reader.index
        }
        guard skip("}") else { return nil }
        let event = Event(
            seq: seq, id: EventID(origin: origin, sequence: sequence), hlc: hlc, base: base, collection: collection,
            item: item, operation: operation, fields: fields, schema: UInt16(schema), updates: updates)
        if let updatesText {
            // Canonical only as the writer writes these updates (it leaves out empty parts).
            var written: [UInt8] = []
            JSONWriter.value(event.updatesJSONValue, into: &written)
            guard written.elementsEqual(UnsafeBufferPointer(rebasing: reader.bytes[updatesText])) else { return nil }
        }
        return event
    }
}
