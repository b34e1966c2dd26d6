/// Encodes `Encodable` types to JSON without Foundation. Keys keep the order in which
/// `encode(to:)` writes them; optional nil values are left out (as Foundation's encoder does).
package enum JSONEncoding {
    package static func value<T: Encodable>(_ v: T) throws -> JSONValue {
        let root = Node()
        try v.encode(to: ValueEncoder(node: root, codingPath: []))
        return root.resolved
    }

    package static func encode<T: Encodable>(_ v: T) throws -> [UInt8] { try value(v).serialized }
}

/// A mutable tree the containers write into; resolved into a `JSONValue` at the end.
final class Node {
    var value: JSONValue = .null
    var members: [(String, Node)]? = nil
    var items: [Node]? = nil

    var resolved: JSONValue {
        if let members { return .object(members.map { ($0.0, $0.1.resolved) }) }
        if let items { return .array(items.map(\.resolved)) }
        return value
    }

    func member(_ key: String) -> Node {
        if members == nil { members = [] }
        if let existing = members!.first(where: { $0.0 == key }) { return existing.1 }
        let n = Node()
        members!.append((key, n))
        return n
    }

    func append() -> Node {
        if items == nil { items = [] }
        let n = Node()
        items!.append(n)
        return n
    }
}

struct ValueEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.members == nil { node.members = [] }
        return KeyedEncodingContainer(KeyedWriter<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.items == nil { node.items = [] }
        return UnkeyedWriter(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleWriter(node: node, codingPath: codingPath) }
}

/// Writes a primitive or nested value into `node`.
private func write<T: Encodable>(_ v: T, into node: Node, path: [any CodingKey]) throws {
    switch v {
    case let b as Bool: node.value = .bool(b)
    case let s as String: node.value = .string(s)
    case let d as Double:
        guard d.isFinite else { throw JSONError.typeMismatch(path: pathString(path), expected: "finite number", found: "\(d)") }
        node.value = .number(d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)")
    case let f as Float: try write(Double(f), into: node, path: path)
    case let i as any FixedWidthInteger: node.value = .number("\(i)")
    default: try v.encode(to: ValueEncoder(node: node, codingPath: path))
    }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.member(key.stringValue).value = .null }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try write(value, into: node.member(key.stringValue), path: codingPath + [key])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { ValueEncoder(node: node, codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.items?.count ?? 0 }

    mutating func encodeNil() throws { node.append().value = .null }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try write(value, into: node.append(), path: codingPath + [IndexKey(count)])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(node: node.append(), codingPath: codingPath).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoder(node: node.append(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { ValueEncoder(node: node.append(), codingPath: codingPath) }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    mutating func encodeNil() throws { node.value = .null }
    mutating func encode<T: Encodable>(_ value: T) throws { try write(value, into: node, path: codingPath) }
}
