import Hummingbird
import NIOCore

/// A header field of swift-http-types (Hummingbird exports `HTTPFields`, not its element).
typealias HeaderField = HTTPFields.Element

/// One request as the fuzzer describes it. The input's layout (Tests/Fuzz/make-corpus.py
/// writes seeds in it):
///
///     byte 0     the route: an index into `fuzzRoutes` (modulo their number)
///     byte 1     the method: below 0x80 one of the route's own methods, else any of
///                `otherMethods` (the 405 answers and the CORS preflight)
///     then text lines:
///       line 1   the path parameter, put in place of the route's `:name` (a route without
///                one gets it appended as one more path segment when non-empty)
///       line 2   the query string, after `?` when non-empty
///       lines    header fields `Name: value`, up to an empty line
///     the rest   the body, as bytes
///
/// `$CLIENT_ID` anywhere in the text becomes the client ID of the app the harness registered,
/// so that seeds can reach the OpenID provider past its client check.
struct FuzzRequest {
    let route: FuzzRoute
    let method: HTTPRequest.Method
    let pathParameter: String
    let query: String
    let headers: HTTPFields
    let body: [UInt8]

    /// Methods sent to a route besides its own.
    static let otherMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .options, .trace]

    init?(_ bytes: [UInt8], clientID: String) {
        guard bytes.count >= 2 else { return nil }
        route = fuzzRoutes[Int(bytes[0]) % fuzzRoutes.count]
        method = bytes[1] < 0x80 ? route.methods[Int(bytes[1]) % route.methods.count]
            : Self.otherMethods[Int(bytes[1]) % Self.otherMethods.count]
        var rest = bytes[2...]
        func line() -> String {
            let end = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
            let text = String(decoding: rest[rest.startIndex..<end], as: UTF8.self)
            rest = end < rest.endIndex ? rest[(end + 1)...] : rest[end...]
            return text.replacing("$CLIENT_ID", with: clientID)
        }
        pathParameter = line()
        query = line()
        var fields = HTTPFields()
        while !rest.isEmpty {
            let header = line()
            if header.isEmpty { break }
            guard let colon = header.firstIndex(of: ":"),
                  let name = HeaderField.Name(String(header[..<colon])) else { continue }
            let value = header[header.index(after: colon)...].drop { $0 == " " }
            fields.append(HeaderField(name: name, value: String(value)))
        }
        headers = fields
        let tail = Array(rest)
        body = clientID.isEmpty ? tail : Array(String(decoding: tail, as: UTF8.self).replacing("$CLIENT_ID", with: clientID).utf8)
    }

    /// The request path: the pattern with the parameter in place, then the query.
    var path: String {
        var path = "/" + route.pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") ? pathParameter : String(segment)
        }.joined(separator: "/")
        if !route.pattern.contains(":"), !pathParameter.isEmpty { path += "/" + pathParameter }
        if !query.isEmpty { path += "?" + query }
        return path
    }

    /// The Hummingbird request, its body complete in one buffer.
    var request: Request {
        let head = HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: path, headerFields: headers)
        return Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body)))
    }

    /// The values a response or a log line must never repeat: the path parameter, each query
    /// value, each header value and each body "word" that looks like a secret (a regOTT, an
    /// access code, a token, a signature): `minimumSecretLength` characters or more, letters
    /// and digits both. Shorter or digit-free words would match the server's own words (route
    /// names, `authorization_code`) by chance.
    var secretLookingValues: [String] {
        var values: [String] = [pathParameter]
        values += query.split(separator: "&").map { String($0.split(separator: "=", maxSplits: 1).last ?? "") }
        values += headers.map(\.value)
        values += String(decoding: body, as: UTF8.self).split { !Self.isWordCharacter($0) }.map(String.init)
        return values.filter(Self.looksSecret)
    }

    static let minimumSecretLength = 12

    static func looksSecret(_ value: String) -> Bool {
        value.count >= minimumSecretLength && value.allSatisfy(isWordCharacter)
            && value.contains(where: \.isNumber) && value.contains(where: \.isLetter)
    }

    /// Letters, digits and the other characters of base64 and of IDs.
    static func isWordCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == "+" || c == "=")
    }
}
