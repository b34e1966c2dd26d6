import Foundation

/// Redirect URLs of the code flow (docs/MFA.md §5.3): parameters appended with `?` or `&`,
/// percent-encoded except RFC 3986's unreserved characters.
enum OAuthRedirect {
    /// Parameters with an empty value are left out (a request without `state` gets none back).
    static func url(_ base: String, _ parameters: KeyValuePairs<String, String>) -> String {
        let query = parameters.filter { !$0.value.isEmpty }.map { "\(escape($0.key))=\(escape($0.value))" }.joined(separator: "&")
        return base + (base.contains("?") ? "&" : "?") + query
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: out.unicodeScalars.append(Unicode.Scalar(b))
            default: out += String(format: "%%%02X", b)
            }
        }
        return out
    }
}
