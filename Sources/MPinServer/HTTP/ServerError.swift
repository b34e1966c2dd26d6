package import Hummingbird
import MPinWire

/// Why the server refuses a request. Handlers throw these; `statusAndMessage` is the one table
/// that turns them into an HTTP status and the JSON error body `{"message": …}` clients see.
/// Reasons name what is wrong (a field, a step), never a submitted value or a secret.
///
/// Statuses follow the original servers (PROTOCOL.md §2.1, §3–§5): the RPS answers 400 for
/// malformed registration input, the D-TA and the pass endpoints 403 for malformed arguments,
/// 401 for a failed check, 408 for anything expired and 410 for a blocked identity.
package enum ServerError: Error, Sendable, Equatable {
    // MARK: Malformed requests

    /// 400: the request is malformed (`reason` is the whole message).
    case badRequest(String)
    /// 400: a JSON body the RPS cannot read; `detail` names the field, if any (": userId argument missing").
    case invalidJSON(detail: String)
    /// 400: an identity or name field (`field`, never its value) holds a control character.
    case controlCharacter(field: String)
    /// 403: a pass-1 or pass-2 body that cannot be read; `detail` as for `invalidJSON`.
    case invalidPassBody(detail: String)
    /// 403: a pass-1 or pass-2 value that is not what the protocol allows ("U is not a G1 point").
    case invalidData(String)
    /// 403: a D-TA request argument that is missing or malformed ("Missing argument", "Invalid expires").
    case invalidArgument(String)

    // MARK: Refusals

    /// 401: an RPS signature on a D-TA request does not verify.
    case invalidSignature
    /// 401: the PIN (the pass-2 proof) was wrong; the identity is not blocked yet.
    case wrongPIN
    /// 410: the identity is blocked (too many wrong PINs, or revoked). The original's mobile
    /// endpoint gives the same reason text as for a wrong PIN.
    case blocked
    /// 410 as `blocked`, with the verdict's signature in the body (PROTOCOL.md §4.5.1), for a
    /// login that bound a nonce: its host deletes the token only on the pinned server's word.
    case blockedVerdict(signature: String)
    /// 401: the registration is not activated yet.
    case notActivated
    /// 401: a check other than the PIN failed (`reason` says which: "No such registration", …).
    case unauthorized(String)
    /// 403: the user is revoked and may not register.
    case revoked
    /// A registration code that is unknown, used, expired or another user's (MFA.md §8).
    case regCodeRefused
    /// A registration in `code` mode whose activation code is not the user's (nothing stored).
    case activationCodeRefused
    /// A DVS registration token that is unknown, expired or used (docs/MFA.md §14.1).
    case dvsTokenRefused
    /// No signing key is enrolled under the signature's mpinId (docs/MFA.md §14.3).
    case signingKeyNotFound
    /// The signing key is blocked after too many invalid signatures.
    case signingKeyBlocked
    /// 403: pass 2 without live pass-1 state (expired, replayed or never sent).
    case noPass1State
    /// 408: something signed or issued has expired (`reason` says what).
    case expired(String)
    /// 410: no time permit for an identity that is not (or no longer) issued.
    case timePermitRefused
    /// 410 as `timePermitRefused`, with the signature of a "revoked" verdict over the nonce the
    /// host sent (PROTOCOL.md §4.5.1): its host records the identity as revoked only then.
    case revokedVerdict(signature: String)
    /// 412: the mobile's access-number login finds no live access number.
    case accessNumberInvalid
    /// 412: the mobile's access-code login finds no live session (MFA.md §6).
    case accessCodeInvalid
    /// 404: `codeStatus` or the browser's poll names no live session (MFA.md §4, §5.3).
    case sessionNotFound
    /// 404: no live, unused access number has this number (§5.7).
    case accessNumberNotFound
    /// 429: the client asked for too many access numbers this minute (§5.1).
    case tooManyRequests

    // MARK: Routing and transport

    /// 404: no endpoint at this path.
    case notFound
    /// 405: the endpoint exists but not for this method.
    case methodNotAllowed
    /// 413: the body is larger than `maxBodyBytes`.
    case bodyTooLarge

    // MARK: The server's own faults

    /// 500: a fault of this server (`reason` is safe to show: "Random source failed").
    case `internal`(String)
    /// 502: the remote D-TA could not be reached or refused (`reason` says which).
    case dtaFailure(String)
    /// 503: a resource is temporarily unavailable (storage, spool, capacity).
    case unavailable(String)

    /// The table: status and message of every error.
    package var statusAndMessage: (status: Int, message: String) {
        switch self {
        case .badRequest(let reason): (400, reason)
        case .invalidJSON(let detail): (400, "BAD REQUEST. INVALID JSON" + detail)
        case .controlCharacter(let field): (400, "BAD REQUEST. Control character in " + field)
        case .invalidPassBody(let detail): (403, "BAD REQUEST. Invalid data received" + detail)
        case .invalidData(let reason): (403, "Invalid data received. " + reason)
        case .invalidArgument(let reason): (403, reason)
        case .invalidSignature: (401, "Invalid signature")
        case .wrongPIN: (401, "Wrong PIN.")
        case .blocked, .blockedVerdict: (410, "Wrong PIN.")
        case .notActivated: (401, "M-PinID not active.")
        case .unauthorized(let reason): (401, reason)
        case .revoked: (403, "Identity not authorized")
        case .regCodeRefused: (403, "Invalid or expired registration code")
        case .activationCodeRefused: (403, "Invalid activation code")
        case .dvsTokenRefused: (403, "Invalid or expired DVS registration token")
        case .signingKeyNotFound: (404, "No such signing key")
        case .signingKeyBlocked: (410, "Signing key blocked")
        case .noPass1State: (403, "Invalid pass one data")
        case .expired(let reason): (408, reason)
        case .timePermitRefused, .revokedVerdict: (410, "Time permit refused")
        case .accessNumberInvalid: (412, "Invalid or expired access number")
        case .accessCodeInvalid: (412, "Invalid or expired access code")
        case .sessionNotFound: (404, "Invalid or expired access code")
        case .accessNumberNotFound: (404, "Invalid or expired access number")
        case .tooManyRequests: (429, "Too many requests")
        case .notFound: (404, "URI NOT FOUND")
        case .methodNotAllowed: (405, "Method not allowed")
        case .bodyTooLarge: (413, "Request body too large")
        case .internal(let reason): (500, reason)
        case .dtaFailure(let reason): (502, reason)
        case .unavailable(let reason): (503, reason)
        }
    }

    /// The HTTP status code.
    package var statusCode: Int { statusAndMessage.status }
    /// The message of the JSON error body, safe to show and to log.
    package var message: String { statusAndMessage.message }

    /// Any error as the server answers it: its own errors as they are, the router's "no such
    /// path" as `notFound`, and everything else as a 500 that reveals nothing.
    package init(answering error: any Error) {
        switch error {
        case let e as ServerError: self = e
        case let e as HTTPError where e.status == .notFound: self = .notFound
        case let e as HTTPError where e.status == .contentTooLarge: self = .bodyTooLarge
        default: self = .internal("Internal error")
        }
    }
}

extension ServerError: CustomStringConvertible {
    package var description: String { "\(statusCode) \(message)" }
}

extension ServerError: HTTPResponseError {
    package var status: HTTPResponse.Status { .init(code: statusCode) }

    /// The JSON error body, with `WWW-Authenticate` on every 401 (PROTOCOL.md §2.1).
    package func response(from request: Request, context: some RequestContext) -> Response { jsonResponse() }

    package func jsonResponse() -> Response {
        var signature: String? = nil
        switch self {
        case .blockedVerdict(let s), .revokedVerdict(let s): signature = s
        default: break
        }
        var response = JSONResponse(status: statusCode, ErrorResponse(message: message, verdictSignature: signature)).response()
        if statusCode == 401 { response.headers[.wwwAuthenticate] = "Authenticate" }
        return response
    }
}
