package import Hummingbird
import MPinJSON
import MPinWire

/// Typed request bodies: the MPinWire message types read strictly (`WireCoding.strict`, the
/// reading the client's messages are tested against). The one deliberate leniency of the server, `OTP` given
/// as a number, lives in `Pass2Request` (MPinWire) because peers of the original server send it.
package struct WireBodyDecoder: Sendable {
    /// The parser's size limit: the body-limit middleware has already refused anything larger.
    package let maxBodyBytes: Int

    package init(maxBodyBytes: Int) { self.maxBodyBytes = maxBodyBytes }

    /// Which error a body that cannot be read becomes: the RPS's registration, activation and
    /// RPA endpoints answer 400 "INVALID JSON", the pass endpoints 403 "Invalid data received".
    package enum Refusal: Sendable {
        case invalidJSON, invalidPassBody

        func error(_ detail: String) -> ServerError {
            switch self {
            case .invalidJSON: .invalidJSON(detail: detail)
            case .invalidPassBody: .invalidPassBody(detail: detail)
            }
        }
    }

    /// Decodes the (already collected) body as `T`.
    package func decode<T: Decodable>(_ type: T.Type, from request: Request, refusal: Refusal = .invalidJSON) async throws -> T {
        var request = request
        return try decode(type, from: try await request.collectBody(upTo: maxBodyBytes), refusal: refusal)
    }

    /// Decodes a body already read. A member named twice is a syntax error (`refusal`), and
    /// an identity or name field holding a control character is `controlCharacter` (400).
    package func decode<T: Decodable>(_ type: T.Type, from body: ByteBuffer, refusal: Refusal = .invalidJSON) throws(ServerError) -> T {
        var parser = JSONParser()
        parser.maxBytes = maxBodyBytes
        parser.rejectsDuplicateKeys = true
        let value: JSONValue
        do { value = try parser.parse(body.readableBytesView) } catch { throw refusal.error(Self.describe(error)) }
        if let field = Self.controlCharacterField(in: value) { throw ServerError.controlCharacter(field: field) }
        do {
            return try JSONDecoding.decode(type, from: value)
        } catch {
            throw refusal.error(Self.describe(error))
        }
    }

    /// The members that name someone or something: identities (an e-mail address, an mpinId),
    /// device, application and customer names. A control character in one (a NUL cuts a
    /// C string, a newline forges a log or a mail line) is never legitimate (docs/SECURITY.md §5).
    static let identityAndNameFields: Set<String> = [
        "userId", "userID", "user_id", "mpinId", "mpin_id", "mpinID", "deviceName", "name", "appName",
        "customerName", "customerId", "email", "login_hint", "sub", "client_id", "displayName",
    ]

    /// The first identity or name member, at any depth, whose string has a control character
    /// (Unicode category Cc: U+0000–U+001F, U+007F–U+009F); nil when there is none.
    static func controlCharacterField(in value: JSONValue) -> String? {
        switch value {
        case .object(let members):
            for member in members {
                if identityAndNameFields.contains(member.key), case .string(let s) = member.value,
                   s.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                    return member.key
                }
                if let field = controlCharacterField(in: member.value) { return field }
            }
            return nil
        case .array(let items):
            for item in items { if let field = controlCharacterField(in: item) { return field } }
            return nil
        default:
            return nil
        }
    }

    /// Names the field a decoding error is about, never its value: ": userId argument missing",
    /// ": wrong type for U", or nothing for text that is not JSON.
    static func describe(_ error: any Error) -> String {
        guard let e = error as? JSONError, let field = e.field else { return "" }
        if case .missingKey = e { return ": \(field) argument missing" }
        return ": wrong type for \(field)"
    }
}

/// A typed response: a wire value written as JSON (MPinJSON, keys in declaration order as the
/// original Python servers wrote them), with its status and any extra headers.
struct JSONResponse<Body: Encodable & Sendable>: ResponseGenerator, Sendable {
    var status: Int
    var body: Body
    var headers: HTTPFields

    init(status: Int = 200, _ body: Body, headers: HTTPFields = [:]) {
        self.status = status; self.body = body; self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) -> Response { response() }

    func response() -> Response {
        // Only a non-finite Double fails to encode, and no wire type has one.
        let bytes = (try? WireCoding.encode(body)) ?? Array("{}".utf8)
        var fields: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        fields.append(contentsOf: headers)
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// A verdict the RPS answers with a status of its own (the final authentication step).
extension Reply: ResponseGenerator {
    func response(from request: Request, context: some RequestContext) -> Response {
        JSONResponse(status: status, body).response()
    }
}
