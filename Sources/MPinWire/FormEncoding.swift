/// `application/x-www-form-urlencoded` as Python's `urllib.urlencode` writes it (the
/// signature `params` of docs/PROTOCOL.md §3.5): unreserved `A-Z a-z 0-9 _ . -` kept, space as
/// `+`, everything else `%XX` upper case.
package enum FormEncoding {
    /// Encodes pairs in the given order.
    package static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// Decodes a query string into pairs (later duplicates kept); nil on a bad escape.
    package static func decode(_ query: String) -> [(String, String)]? {
        var out: [(String, String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let k = unescape(String(kv[0])), let v = unescape(kv.count > 1 ? String(kv[1]) : "") else {
                return nil
            }
            out.append((k, v))
        }
        return out
    }

    /// Percent-escapes one key or value.
    package static func escape(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            case UInt8(ascii: " "): out += "+"
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 15)])
            }
        }
        return out
    }

    /// Reverses `escape`; nil on a malformed `%` escape or invalid UTF-8.
    package static func unescape(_ s: String) -> String? {
        var bytes: [UInt8] = []
        let u = Array(s.utf8)
        var i = 0
        while i < u.count {
            switch u[i] {
            case UInt8(ascii: "+"): bytes.append(32); i += 1
            case UInt8(ascii: "%"):
                guard i + 2 < u.count,
                      let v = Hex.decode(String(decoding: u[(i + 1)...(i + 2)], as: UTF8.self)) else { return nil }
                bytes.append(v[0]); i += 3
            default: bytes.append(u[i]); i += 1
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
