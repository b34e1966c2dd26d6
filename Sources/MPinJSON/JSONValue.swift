/// A JSON document, kept without Foundation so that the PAM module can link it statically
/// and stay small. Object members keep their order, so re-encoding is stable.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, kept as its literal text so that integers of any size survive exactly.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)): x == y || (Double(x) != nil && Double(x) == Double(y))
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The member named `key` of an object (the first, if repeated).
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    package var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    package var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    package var int64Value: Int64? { if case .number(let n) = self { Int64(n) } else { nil } }
    package var doubleValue: Double? { if case .number(let n) = self { Double(n) } else { nil } }
    package var isNull: Bool { if case .null = self { true } else { false } }

    /// A short name of the value's type, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// Why a text is not acceptable JSON. Carries a position, never the document's content.
package enum JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    case syntax(offset: Int, reason: String)
    case tooDeep(limit: Int)
    case tooLarge(limit: Int)
    /// Decoding into a Swift type failed: the path of keys and what was wrong.
    case typeMismatch(path: String, expected: String, found: String)
    case missingKey(path: String)

    package var description: String {
        switch self {
        case let .syntax(offset, reason): "invalid JSON at byte \(offset): \(reason)"
        case let .tooDeep(limit): "JSON nested deeper than \(limit) levels"
        case let .tooLarge(limit): "JSON document larger than \(limit) bytes"
        case let .typeMismatch(path, expected, found): "JSON \(path.isEmpty ? "value" : path): expected \(expected), found \(found)"
        case let .missingKey(path): "JSON is missing \(path)"
        }
    }
}

extension JSONError {
    /// The innermost key a decoding error is about ("userId" for a missing
    /// `mpinResponse.userId`), for messages that name a field but never show a value; nil for
    /// errors of the text itself and for the top-level value.
    package var field: String? {
        let path: String
        switch self {
        case let .typeMismatch(p, _, _), let .missingKey(p): path = p
        case .syntax, .tooDeep, .tooLarge: return nil
        }
        guard let last = path.split(separator: ".").last else { return nil }
        return String(last)
    }
}
