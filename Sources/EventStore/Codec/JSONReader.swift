// Not Foundation's JSON: checksums and digests are recomputed from parsed values, so 3 vs 3.0 and Int64s stay exact.
/// A strict, depth-limited JSON reader over a byte buffer.
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(offset: index, message: message) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws -> Value {
        guard index < bytes.count else { throw error("unexpected end of JSON") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character \(describe(bytes[index]))")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of JSON") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw error("invalid literal (expected \(word))")
        }
        index += count
    }

    private mutating func object(depth: Int) throws -> [String: Value] {
        guard depth <= maxDepth else { throw error("JSON nested deeper than \(maxDepth) levels") }
        index += 1
        var members: [String: Value] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key in an object")
            }
            let keyOffset = index
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after an object key")
            }
            index += 1
            skipWhitespace()
            let member: Value
            do {
                member = try value(depth: depth)
            } catch let error as JSONSyntaxError {
                throw error.inside(key: key)
            }
            guard members.updateValue(member, forKey: key) == nil else {
                throw JSONSyntaxError(offset: keyOffset, message: "duplicate object key \(key.debugDescription)")
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of JSON in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            } else {
                throw error("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws -> [Value] {
        guard depth <= maxDepth else { throw error("JSON nested deeper than \(maxDepth) levels") }
        index += 1
        var values: [Value] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return values
        }
        while true {
            skipWhitespace()
            do {
                values.append(try value(depth: depth))
            } catch let error as JSONSyntaxError {
                throw error.inside(index: values.count)
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of JSON in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return values
            } else {
                throw error("expected ',' or ']' in an array")
            }
        }
    }

    mutating func string() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                guard let text = ByteReader.string(validating: UnsafeRawBufferPointer(slice)) else {
                    throw JSONSyntaxError(offset: start, message: "string is not valid UTF-8")
                }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw error("unescaped control character in a string") }
            index += 1
        }
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard let text = buffer.withUnsafeBytes({ ByteReader.string(validating: $0) }) else {
                    throw JSONSyntaxError(offset: start, message: "string is not valid UTF-8")
                }
                index += 1
                return text
            }
            guard byte >= 0x20 else { throw error("unescaped control character in a string") }
            if byte != UInt8(ascii: "\\") {
                buffer.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw error("lone surrogate in a \\u escape") }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("lone surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw error("lone surrogate in a \\u escape")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                buffer.append(contentsOf: String(Character(unicode)).utf8)
            default: throw error("invalid escape sequence")
            }
        }
        throw JSONSyntaxError(offset: start - 1, message: "unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("unexpected end of JSON in a \\u escape") }
        var result: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            result = result << 4 | UInt32(digit)
            index += 1
        }
        return result
    }

    /// A number: an ``Value/int(_:)`` when written without a fraction or an exponent (and then it
    /// must fit 64 bits), a finite ``Value/double(_:)`` otherwise.
    mutating func number() throws -> Value {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        // The integer part's magnitude, accumulated as it is scanned (no text to parse again).
        var magnitude: UInt64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("leading zero in a number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                let (times10, carry) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, carry2) = times10.addingReportingOverflow(UInt64(bytes[index] &- UInt8(ascii: "0")))
                magnitude = sum
                overflow = overflow || carry || carry2
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected a digit in an exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger {
            let limit = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
            guard !overflow, magnitude <= limit else {
                throw JSONSyntaxError(
                    offset: start, message: "integer \(numberText(from: start)) does not fit in 64 bits")
            }
            return .int(negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude))
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            throw JSONSyntaxError(offset: start, message: "number \(numberText(from: start)) is out of range")
        }
        return .double(double)
    }

    /// The number that starts at `start` and ends at the current index, shortened for a message.
    private func numberText(from start: Int) -> String {
        let end = min(index, start + 40)
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        return end < index ? text + "… (\(index - start) characters)" : text
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
