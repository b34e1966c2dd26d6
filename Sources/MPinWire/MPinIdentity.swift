import MPinCrypto
import MPinJSON

/// The mpinId (docs/PROTOCOL.md §3.2): the UTF-8 bytes of a JSON object written as Python 2's
/// `json.dumps` writes it, sent as lower-case hex. Opaque to everyone but its issuer: hash
/// the exact bytes, never re-serialise.
package enum MPinIdentity {
    /// The mpinId JSON text: `{"mobile": 1, "issued": "…", "userID": "…", "salt": "…"}`
    /// with Python's separators, key order and `\uXXXX` escaping of non-ASCII.
    /// With a `scope` (mpin-server's `hostScope`), `"scope": "…"` ends the object.
    package static func json(userID: String, mobile: Int, issued: WireTimestamp, salt: [UInt8], scope: String? = nil) -> String {
        "{\"mobile\": \(mobile), \"issued\": \(pythonQuoted(WireTime.pythonString(issued))), "
            + "\"userID\": \(pythonQuoted(userID)), \"salt\": \(pythonQuoted(Hex.encode(salt)))"
            + (scope.map { ", \"scope\": \(pythonQuoted($0))" } ?? "") + "}"
    }

    /// The raw mpinId bytes for `json(...)`.
    package static func build(userID: String, mobile: Int, issued: WireTimestamp, salt: [UInt8], scope: String? = nil) -> [UInt8] {
        Array(json(userID: userID, mobile: mobile, issued: issued, salt: salt, scope: scope).utf8)
    }

    /// The scope of a registration made for its host's logins only (`mpinctl register`,
    /// pam_mpin's self-enrolment). The mpinId is hashed into the client secret, so the mark
    /// travels with every proof the token makes and no relay can take it off: the server
    /// refuses to let such a proof approve an access number or a web login (docs/SECURITY.md §2).
    package static let hostScope = "host"

    /// Whether the mpinId's bytes carry `"scope": "host"`.
    package static func isHostScoped(_ bytes: [UInt8]) -> Bool {
        guard let object = try? JSONParser().parse(bytes) else { return false }
        return object["scope"]?.stringValue == hostScope
    }

    /// The fingerprint of a registration: the lower-case hex SHA-256 of its mpinId's bytes (the
    /// hex `mpinIdHex`), as `mpin list --fingerprints` shows it, `mpinctl link --registration`
    /// pins it and `mpin-server user activate --registration` takes it. Nil when `mpinIdHex` is
    /// not hex.
    package static func fingerprint(mpinIdHex: String) -> String? {
        Hex.decode(mpinIdHex).map { Hex.encode(MPin.hashID($0)) }
    }

    /// The fields a holder may read back from the raw bytes (`userID`, `mobile`); nil when the
    /// bytes are not such a JSON object.
    package static func parse(_ bytes: [UInt8]) -> (userID: String, mobile: Int)? {
        guard let object = try? JSONParser().parse(bytes), let userID = object["userID"]?.stringValue else { return nil }
        let mobile = Int(object["mobile"]?.int64Value ?? 0)
        return (userID, mobile)
    }

    /// A JSON string literal escaped as Python's `json.dumps` with `ensure_ascii`.
    package static func pythonQuoted(_ s: String) -> String {
        var out = "\""
        for unit in s.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default: out += "\\u" + String(unit, radix: 16).leftPadded(to: 4)
            }
        }
        return out + "\""
    }
}
