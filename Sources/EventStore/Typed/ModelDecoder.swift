import Foundation

/// Decodes `Decodable` models straight from field values, without a JSON round trip.
///
/// It accepts exactly what `JSONDecoder` (default strategies) accepts from the JSON form of the
/// same values, so a model reads the same whichever way it is decoded:
/// - a number decodes as any numeric type that holds it exactly (`3.0` as an `Int`, `3` as a
///   `Double`); a `Float` takes the nearest value;
/// - `Date` as seconds since 2001 (its own `Codable` form), `Data` from base64 text, `URL` from
///   its text, `Decimal` from a number;
/// - `null` or a missing field is `nil` for an optional, `valueNotFound` or `keyNotFound`
///   otherwise; a value of another kind is `typeMismatch`, with the coding path to it;
/// - a number that does not fit the property's type is `dataCorrupted`, with the path to it
///   (where `JSONDecoder` gives an empty path).
enum ModelDecoder {
    /// The `Decimal` a stored number reads as (`nil` for another value, or a number no
    /// `Decimal` holds).
    static func decimal(_ value: Value) -> Decimal? {
        switch value {
        case .int(let integer): Decimal(integer)
        case .double(let double): Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX"))
        default: nil
        }
    }

    /// Where an object's members are: in a dictionary, or in an item's record.
    enum Members {
        case fields([String: Value])
        /// Read in place; valid while the record's read transaction is. Indexed (see
        /// ``ItemRecordView/indexed()``): a model looks its properties up one by one, and
        /// `contains` and `allKeys` cannot report a damaged record.
        case record(ItemRecordView)
    }

    /// The members of one object: an item's fields (with the schema's defaults for those it
    /// lacks, and its id) or a nested object's members.
    ///
    /// A class: the decoder's containers share it instead of copying a record view.
    final class Object {
        let members: Members
        let defaults: [String: Value]
        let id: Value?

        init(members: Members, defaults: [String: Value] = [:], id: Value? = nil) {
            self.members = members
            self.defaults = defaults
            self.id = id
        }

        convenience init(fields: [String: Value]) {
            self.init(members: .fields(fields))
        }

        func value(_ key: String) throws -> Value? {
            if let id, key == "id" { return id }
            let value: Value? =
                switch members {
                case .fields(let fields): fields[key]
                case .record(let record): try record.value(key)
                }
            return value ?? defaults[key]
        }

        /// The names of every member, the defaults' and the id.
        var keys: [String] {
            get throws {
                var keys: [String]
                switch members {
                case .fields(let fields): keys = Array(fields.keys)
                case .record(let record): keys = try record.names()
                }
                let present = Set(keys)
                keys += defaults.keys.filter { !present.contains($0) }
                if id != nil, !present.contains("id"), defaults["id"] == nil { keys.append("id") }
                return keys
            }
        }

        /// Every member, with the defaults and the id.
        var fields: [String: Value] {
            get throws {
                var fields: [String: Value]
                switch members {
                case .fields(let members): fields = members
                case .record(let record): fields = try record.fields()
                }
                for (key, value) in defaults where fields[key] == nil { fields[key] = value }
                if let id { fields["id"] = id }
                return fields
            }
        }
    }

    /// Decodes a model from an object's fields.
    static func decode<T: Decodable>(_ type: T.Type, from object: Object) throws -> T {
        try T(from: Decoding(object: object, codingPath: []))
    }

    /// Decodes a value of type `T` from `value`, found at `path` (made only when needed: a
    /// nested container or an error).
    static func decode<T: Decodable>(_ type: T.Type, from value: Value, at path: @autoclosure () -> [any CodingKey])
        throws -> T
    {
        // Types JSONDecoder reads in a form of its own, and the exact ones.
        if T.self == Value.self { return value as! T }
        if T.self == String.self { return try string(value, at: path()) as! T }
        if T.self == Double.self { return try double(value, at: path()) as! T }
        if T.self == Int.self { return try integer(Int.self, value, at: path()) as! T }
        if T.self == Int64.self { return try integer(Int64.self, value, at: path()) as! T }
        if T.self == Bool.self { return try bool(value, at: path()) as! T }
        if T.self == Date.self { return Date(timeIntervalSinceReferenceDate: try double(value, at: path())) as! T }
        if T.self == Data.self {
            guard let data = Data(base64Encoded: try string(value, at: path())) else {
                throw corrupted(path(), "Encountered Data is not valid Base64.")
            }
            return data as! T
        }
        if T.self == URL.self {
            guard let url = URL(string: try string(value, at: path())) else {
                throw corrupted(path(), "Invalid URL string.")
            }
            return url as! T
        }
        if T.self == Decimal.self {
            switch value {
            case .int, .double:
                guard let decimal = decimal(value) else {
                    throw corrupted(path(), "Parsed JSON number <\(value)> does not fit in Decimal.")
                }
                return decimal as! T
            default: throw mismatch(Decimal.self, value, at: path())
            }
        }
        return try T(from: Decoding(value: value, codingPath: path()))
    }

    // MARK: Scalars

    static func string(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> String {
        guard case .string(let string) = value else { throw mismatch(String.self, value, at: path()) }
        return string
    }

    static func bool(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, at: path()) }
        return flag
    }

    static func double(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> Double {
        switch value {
        case .double(let double): double
        case .int(let integer): Double(integer)
        default: throw mismatch(Double.self, value, at: path())
        }
    }

    static func float(_ value: Value, at path: @autoclosure () -> [any CodingKey]) throws -> Float {
        let double = try double(value, at: path())
        let float = Float(double)
        guard float.isFinite else {
            throw corrupted(path(), "Parsed JSON number <\(double)> does not fit in Float.")
        }
        return float
    }

    static func integer<T: FixedWidthInteger>(
        _ type: T.Type, _ value: Value, at path: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        let integer: T?
        switch value {
        case .int(let number): integer = T(exactly: number)
        case .double(let number): integer = T(exactly: number)
        default: throw mismatch(T.self, value, at: path())
        }
        guard let integer else {
            let text = value.intValue.map { "\($0)" } ?? value.doubleValue.map { "\($0)" } ?? ""
            throw corrupted(path(), "Number \(text) does not fit in \(T.self).")
        }
        return integer
    }

    // MARK: Errors

    static func mismatch<T>(_ type: T.Type, _ value: Value, at path: [any CodingKey]) -> DecodingError {
        if case .null = value {
            return .valueNotFound(
                type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
        }
        return .typeMismatch(
            type,
            .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(value.kindName) instead.")
        )
    }

    static func corrupted(_ path: [any CodingKey], _ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: path, debugDescription: description))
    }
}
