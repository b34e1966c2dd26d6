/// Decodes `Decodable` types from JSON without Foundation.
package enum JSONDecoding {
    /// Parses `bytes` (with the parser's limits) and decodes a `T`.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>,
                                            parser: JSONParser = JSONParser()) throws -> T {
        try decode(type, from: try parser.parse(bytes))
    }

    package static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: [], lenient: false))
    }

    /// Decodes a `T` with defaults instead of errors: a missing or wrongly typed string, bool
    /// or number becomes `""`, `false` or `0`, a missing or wrongly typed object or array an
    /// empty one, and a wrongly typed optional `nil`. Never throws for a well-formed document
    /// whose top level is an object. For readers that must accept what peers they do not
    /// control send (see MPinWire's `WireReading`); everything else decodes strictly.
    package static func decodeLeniently<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: [], lenient: true))
    }
}

/// Dotted path of coding keys, for error messages.
func pathString(_ path: [any CodingKey]) -> String {
    path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
}

struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ i: Int) { intValue = i }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    /// Defaults instead of errors (`JSONDecoding.decodeLeniently`).
    let lenient: Bool
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ expected: String) -> JSONError {
        .typeMismatch(path: pathString(codingPath), expected: expected, found: value.typeName)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            guard lenient else { throw mismatch("object") }
            return KeyedDecodingContainer(KeyedValues<Key>(members: [], codingPath: codingPath, lenient: true))
        }
        return KeyedDecodingContainer(KeyedValues<Key>(members: members, codingPath: codingPath, lenient: lenient))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            guard lenient else { throw mismatch("array") }
            return UnkeyedValues(items: [], codingPath: codingPath, lenient: true)
        }
        return UnkeyedValues(items: items, codingPath: codingPath, lenient: lenient)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValue(decoder: self) }
}

private struct KeyedValues<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [(key: String, value: JSONValue)]
    let codingPath: [any CodingKey]
    let lenient: Bool

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { members.contains { $0.key == key.stringValue } }

    /// A missing member is an error, or null when lenient (which then decodes as a default).
    func child(_ key: Key) throws -> ValueDecoder {
        guard let v = members.first(where: { $0.key == key.stringValue })?.value else {
            guard lenient else { throw JSONError.missingKey(path: pathString(codingPath + [key])) }
            return ValueDecoder(value: .null, codingPath: codingPath + [key], lenient: true)
        }
        return ValueDecoder(value: v, codingPath: codingPath + [key], lenient: lenient)
    }

    /// Lenient: an optional of the wrong type is nil rather than a default (a missing
    /// `usePermits` and a `"usePermits": "yes"` both leave the caller's own default in force).
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }
    // The protocol's primitive overloads would otherwise take the standard library's defaults.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let v = members.first(where: { $0.key == key.stringValue })?.value, !v.isNull else { return nil }
        let path = codingPath + [key]
        guard lenient else { return try T(from: ValueDecoder(value: v, codingPath: path, lenient: false)) }
        if let strict = try? T(from: ValueDecoder(value: v, codingPath: path, lenient: false)) { return strict }
        switch v {
        case .object, .array: return try T(from: ValueDecoder(value: v, codingPath: path, lenient: true))
        default: return nil
        }
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).value.isNull }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try T(from: child(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try Bool(from: child(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try String(from: child(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try Double(from: child(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Int(from: child(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try Int64(from: child(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> { try child(key).container(keyedBy: type) }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(members), codingPath: codingPath, lenient: lenient) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct UnkeyedValues: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    let lenient: Bool
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey], lenient: Bool) {
        self.items = items; self.codingPath = codingPath; self.lenient = lenient
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func next() throws -> ValueDecoder {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else { throw JSONError.missingKey(path: pathString(path)) }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], codingPath: path, lenient: lenient)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey> { try next().container(keyedBy: type) }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValue: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard let b = decoder.value.boolValue else {
            if decoder.lenient { return false }
            throw decoder.mismatch("boolean")
        }
        return b
    }

    func decode(_ type: String.Type) throws -> String {
        guard let s = decoder.value.stringValue else {
            if decoder.lenient { return "" }
            throw decoder.mismatch("string")
        }
        return s
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard let d = decoder.value.doubleValue else {
            if decoder.lenient { return 0 }
            throw decoder.mismatch("number")
        }
        return d
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    /// Integers must be written as integers in range: "1.0" or "1e3" are refused.
    func integer<T: FixedWidthInteger>() throws -> T {
        guard case .number(let text) = decoder.value, let v = T(text) else {
            if decoder.lenient { return 0 }
            guard case .number = decoder.value else { throw decoder.mismatch("integer") }
            throw decoder.mismatch("integer in range of \(T.self)")
        }
        return v
    }

    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self { return decoder.value as! T }
        return try T(from: decoder)
    }
}

extension JSONValue: Codable {
    /// A `JSONValue` field takes the raw JSON as it is (for fields whose shape varies).
    package init(from decoder: any Decoder) throws {
        guard let d = decoder as? ValueDecoder else {
            throw JSONError.typeMismatch(path: pathString(decoder.codingPath), expected: "MPinJSON decoder", found: "other")
        }
        self = d.value
    }

    package func encode(to encoder: any Encoder) throws {
        guard let e = encoder as? ValueEncoder else {
            throw JSONError.typeMismatch(path: pathString(encoder.codingPath), expected: "MPinJSON encoder", found: "other")
        }
        e.node.value = self
    }
}
