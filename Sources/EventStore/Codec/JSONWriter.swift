/// The canonical JSON writer.
enum JSONWriter {
    static func value(_ value: Value, into bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .double(let number):
            if number.isFinite {
                // Swift's shortest round-trip form always holds a "." or an exponent.
                bytes.append(contentsOf: number.description.utf8)
            } else {
                bytes.append(contentsOf: "null".utf8)
            }
        case .string(let text): string(text, into: &bytes)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element, into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members): object(members, into: &bytes)
        }
    }

    static func object(_ members: [String: Value], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for key in members.keys.sorted(by: utf8Less) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            string(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value(members[key]!, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func string(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
