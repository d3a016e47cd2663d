/// The decoder and containers a model's `init(from:)` works with: each reads the values
/// ``ModelDecoder`` converts.
extension ModelDecoder {
    /// One value being decoded: the `Decoder` a model's `init(from:)` receives, and its single
    /// value container.
    struct Decoding: Decoder, SingleValueDecodingContainer {
        /// The object when the value is the top-level model (with its id and defaults).
        var object: Object?
        var value: Value
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(object: Object, codingPath: [any CodingKey]) {
            self.object = object
            self.value = .null
            self.codingPath = codingPath
        }

        init(value: Value, codingPath: [any CodingKey]) {
            self.value = value
            self.codingPath = codingPath
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            if let object { return KeyedDecodingContainer(Keyed<Key>(object: object, codingPath: codingPath)) }
            guard case .object(let members) = value else {
                throw ModelDecoder.mismatch([String: Any].self, value, at: codingPath)
            }
            return KeyedDecodingContainer(Keyed<Key>(object: Object(fields: members), codingPath: codingPath))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            if let object { throw ModelDecoder.mismatch([Any].self, .object(try object.fields), at: codingPath) }
            guard case .array(let elements) = value else {
                throw ModelDecoder.mismatch([Any].self, value, at: codingPath)
            }
            return Unkeyed(elements: elements, codingPath: codingPath)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            try object.map { Decoding(value: .object(try $0.fields), codingPath: codingPath) } ?? self
        }

        func decodeNil() -> Bool { object == nil && value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try ModelDecoder.bool(value, at: codingPath) }
        func decode(_ type: String.Type) throws -> String { try ModelDecoder.string(value, at: codingPath) }
        func decode(_ type: Double.Type) throws -> Double { try ModelDecoder.double(value, at: codingPath) }
        func decode(_ type: Float.Type) throws -> Float { try ModelDecoder.float(value, at: codingPath) }
        func decode(_ type: Int.Type) throws -> Int { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try ModelDecoder.integer(type, value, at: codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try ModelDecoder.decode(T.self, from: value, at: codingPath)
        }
    }

    /// The members of an object, by coding key.
    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: Object
        let codingPath: [any CodingKey]

        // A record's names were checked when it was read (``ItemRecordView``): listing them
        // cannot fail.
        var allKeys: [Key] { ((try? object.keys) ?? []).compactMap { Key(stringValue: $0) } }

        /// Whether the object has the member; `true` when its value does not decode, so that
        /// decoding it reports the error.
        func contains(_ key: Key) -> Bool {
            do {
                return try object.value(key.stringValue) != nil
            } catch {
                return true
            }
        }

        private func value(_ key: Key) throws -> Value {
            guard let value = try object.value(key.stringValue) else {
                throw DecodingError.keyNotFound(
                    key,
                    .init(
                        codingPath: codingPath,
                        debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
            }
            return value
        }

        private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

        private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
            try ModelDecoder.integer(T.self, try value(key), at: path(key))
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            let value = try object.value(key.stringValue)
            return value == nil || value == .null
        }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try ModelDecoder.bool(try value(key), at: path(key))
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try ModelDecoder.string(try value(key), at: path(key))
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try ModelDecoder.double(try value(key), at: path(key))
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try ModelDecoder.float(try value(key), at: path(key))
        }
        // The common integers first, without the generic path (whose metadata is looked up at
        // run time: the container is generic over the model's keys).
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            let value = try value(key)
            if case .int(let number) = value, let integer = Int(exactly: number) { return integer }
            return try ModelDecoder.integer(Int.self, value, at: path(key))
        }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            let value = try value(key)
            if case .int(let number) = value { return number }
            return try ModelDecoder.integer(Int64.self, value, at: path(key))
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try ModelDecoder.decode(T.self, from: try value(key), at: path(key))
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try Decoding(value: try value(key), codingPath: path(key)).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try Decoding(value: try value(key), codingPath: path(key)).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            Decoding(value: try object.value("super") ?? .null, codingPath: codingPath + [AnyCodingKey("super")])
        }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            Decoding(value: try object.value(key.stringValue) ?? .null, codingPath: path(key))
        }
    }

    /// The elements of an array, in order.
    struct Unkeyed: UnkeyedDecodingContainer {
        let elements: [Value]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(elements: [Value], codingPath: [any CodingKey]) {
            self.elements = elements
            self.codingPath = codingPath
        }

        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        private mutating func next<T>(_ type: T.Type) throws -> (Value, [any CodingKey]) {
            let path = codingPath + [ElementKey(index: currentIndex)]
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
            }
            defer { currentIndex += 1 }
            return (elements[currentIndex], path)
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, elements[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try element(type).decode(type) }
        mutating func decode(_ type: String.Type) throws -> String { try element(type).decode(type) }
        mutating func decode(_ type: Double.Type) throws -> Double { try element(type).decode(type) }
        mutating func decode(_ type: Float.Type) throws -> Float { try element(type).decode(type) }
        mutating func decode(_ type: Int.Type) throws -> Int { try element(type).decode(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(type).decode(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(type).decode(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(type).decode(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(type).decode(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try element(type).decode(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(type).decode(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(type).decode(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(type).decode(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(type).decode(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try element(type).decode(type) }

        /// The next element, as a single value.
        private mutating func element<T>(_ type: T.Type) throws -> Decoding {
            let (value, path) = try next(type)
            return Decoding(value: value, codingPath: path)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let (value, path) = try next([String: Any].self)
            return try Decoding(value: value, codingPath: path).container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next([Any].self)
            return try Decoding(value: value, codingPath: path).unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next(Any.self)
            return Decoding(value: value, codingPath: path)
        }
    }
}
