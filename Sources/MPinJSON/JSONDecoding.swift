/// Decodes `Decodable` types from JSON without Foundation.
public enum JSONDecoding {
    /// Parses `bytes` (with the parser's limits) and decodes a `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>,
                                            parser: JSONParser = JSONParser()) throws -> T {
        try decode(type, from: try parser.parse(bytes))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: []))
    }
}

/// Dotted path of coding keys, for error messages.
func pathString(_ path: [CodingKey]) -> String {
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
    let codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func mismatch(_ expected: String) -> JSONError {
        .typeMismatch(path: pathString(codingPath), expected: expected, found: value.typeName)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch("object") }
        return KeyedDecodingContainer(KeyedValues<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch("array") }
        return UnkeyedValues(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer { SingleValue(decoder: self) }
}

private struct KeyedValues<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [(key: String, value: JSONValue)]
    let codingPath: [CodingKey]

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { members.contains { $0.key == key.stringValue } }

    func child(_ key: Key) throws -> ValueDecoder {
        guard let v = members.first(where: { $0.key == key.stringValue })?.value else {
            throw JSONError.missingKey(path: pathString(codingPath + [key]))
        }
        return ValueDecoder(value: v, codingPath: codingPath + [key])
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
    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
    func superDecoder() throws -> Decoder { ValueDecoder(value: .object(members), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> Decoder { try child(key) }
}

private struct UnkeyedValues: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [CodingKey]) { self.items = items; self.codingPath = codingPath }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    mutating func next() throws -> ValueDecoder {
        let path = codingPath + [IndexKey(currentIndex)]
        guard !isAtEnd else { throw JSONError.missingKey(path: pathString(path)) }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], codingPath: path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey> { try next().container(keyedBy: type) }
    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> Decoder { try next() }
}

private struct SingleValue: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard let b = decoder.value.boolValue else { throw decoder.mismatch("boolean") }
        return b
    }

    func decode(_ type: String.Type) throws -> String {
        guard let s = decoder.value.stringValue else { throw decoder.mismatch("string") }
        return s
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard let d = decoder.value.doubleValue else { throw decoder.mismatch("number") }
        return d
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    /// Integers must be written as integers in range: "1.0" or "1e3" are refused.
    func integer<T: FixedWidthInteger>() throws -> T {
        guard case .number(let text) = decoder.value else { throw decoder.mismatch("integer") }
        guard let v = T(text) else { throw decoder.mismatch("integer in range of \(T.self)") }
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
    public init(from decoder: Decoder) throws {
        guard let d = decoder as? ValueDecoder else {
            throw JSONError.typeMismatch(path: pathString(decoder.codingPath), expected: "MPinJSON decoder", found: "other")
        }
        self = d.value
    }

    public func encode(to encoder: Encoder) throws {
        guard let e = encoder as? ValueEncoder else {
            throw JSONError.typeMismatch(path: pathString(encoder.codingPath), expected: "MPinJSON encoder", found: "other")
        }
        e.node.value = self
    }
}
