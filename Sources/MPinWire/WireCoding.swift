import MPinJSON

/// How both sides turn MPinWire messages into JSON and back: the one place that decides
/// between strict and lenient reading.
///
/// The server reads requests strictly: a missing field or a field of the wrong type is a
/// 400, never a guess. The client reads responses the way the Milagro SDK does (docs/PROTOCOL.md
/// §2.1), because it must work with servers this project does not control: a missing or
/// wrongly typed string, bool or number in a 200 answer is `""`, `false` or `0`, and the
/// caller's own checks decide whether the message is usable (an empty `clientSecretShare`,
/// say, is a RESPONSE_PARSE_ERROR there, not here). Optional fields of the wrong type are
/// nil, so the SDK's own defaults (`usePermits`: true) stay in force.
package enum WireCoding {
    /// A message read strictly (what the server accepts), with the parser's limits.
    package static func strict<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>,
                                            parser: JSONParser = JSONParser()) throws -> T {
        try JSONDecoding.decode(type, from: bytes, parser: parser)
    }

    /// A response object read leniently (what the client accepts). nil only for a message
    /// type whose own decoding refuses a value outright.
    package static func lenient<T: Decodable>(_ type: T.Type, from object: JSONValue) -> T? {
        try? JSONDecoding.decodeLeniently(type, from: object)
    }

    /// The bytes of a message, compact, members in the order of the type's coding keys, nil
    /// optionals left out.
    package static func encode<T: Encodable>(_ message: T) throws -> [UInt8] {
        try JSONEncoding.encode(message)
    }
}
