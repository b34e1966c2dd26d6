/// Writes one flat JSON object member by member, byte for byte as `JSONEncoding.encode` writes
/// a type whose members are strings, integers and booleans: compact, members in the order
/// written, nil optionals left out.
///
/// Why: `JSONEncoding` builds a tree through `Encodable`'s generic containers before writing
/// it, which for the server's login answers cost more than the bytes themselves
/// (docs/PERFORMANCE.md §2.2). A message with a fixed shape writes itself with this instead
/// (`MPinWire`'s `DirectJSONEncodable`); a test compares the two writers' bytes.
package struct JSONObjectWriter {
    private var out: [UInt8]
    private var first = true

    package init(capacity: Int = 256) {
        out = []
        out.reserveCapacity(capacity)
        out.append(UInt8(ascii: "{"))
    }

    /// Closes the object and returns its bytes; write nothing more after.
    package mutating func finish() -> [UInt8] {
        out.append(UInt8(ascii: "}"))
        return out
    }

    private mutating func key(_ name: String) {
        if first { first = false } else { out.append(UInt8(ascii: ",")) }
        JSONValue.writeString(name, into: &out)
        out.append(UInt8(ascii: ":"))
    }

    package mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        JSONValue.writeString(value, into: &out)
    }

    package mutating func member<I: FixedWidthInteger>(_ name: String, _ value: I?) {
        guard let value else { return }
        key(name)
        out.append(contentsOf: String(value).utf8)
    }

    package mutating func member(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }
}
