/// ``Value`` in its natural JSON form: `null`, `true`, `42`, `4.5`, `"text"`, `[…]`, `{…}`.
///
/// Whole numbers decode as ``Value/int(_:)``; numbers with a fraction or exponent, or too large
/// for 64 bits, as ``Value/double(_:)``.
extension Value: Codable {
    /// Decodes a value from any JSON-like decoder.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [Value] = []
            if let count = array.count { values.reserveCapacity(count) }
            while !array.isAtEnd { values.append(try array.decode(Value.self)) }
            self = .array(values)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var members: [String: Value] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(Value.self, forKey: key) }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? single.decode(Int64.self) {
            self = .int(number)
        } else if let number = try? single.decode(Double.self) {
            self = .double(number)
        } else if let text = try? single.decode(String.self) {
            self = .string(text)
        } else {
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "not a JSON value")
        }
    }

    /// Encodes the value in its natural JSON form.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .int(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .double(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .string(let text):
            var single = encoder.singleValueContainer()
            try single.encode(text)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for value in values { try array.encode(value) }
        case .object(let members):
            var object = encoder.container(keyedBy: AnyCodingKey.self)
            for key in members.keys.sorted(by: utf8Less) {
                try object.encode(members[key]!, forKey: AnyCodingKey(key))
            }
        }
    }
}

/// A coding key for arbitrary string keys.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { stringValue = String(intValue) }
}
