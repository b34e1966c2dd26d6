import Hummingbird
import HTTPTypes

/// An OAuth 2.0 error (RFC 6749 §5.2, §4.1.2.1) as the OpenID endpoints answer it (docs/MFA.md §9):
/// `{"error": …, "error_description": …}`. The description names a parameter, never a value.
struct OAuthError: Error, Sendable, Equatable {
    var httpStatus: Int
    var code: String
    var description: String
    /// `WWW-Authenticate: Basic` for a 401 of client authentication (RFC 6749 §5.2).
    var basicChallenge = false
    /// `WWW-Authenticate: Bearer` for a 401 of the userinfo endpoint (RFC 6750 §3).
    var bearerChallenge = false

    static func invalidRequest(_ d: String) -> OAuthError { OAuthError(httpStatus: 400, code: "invalid_request", description: d) }
    /// A 401 always carries the Basic challenge (RFC 6749 §5.2 requires it after Basic, and
    /// RFC 9110 §15.5.2 on every 401); a 400 (at `/authorize`) never does.
    static func invalidClient(_ d: String, status: Int = 401) -> OAuthError {
        OAuthError(httpStatus: status, code: "invalid_client", description: d, basicChallenge: status == 401)
    }
    static func invalidGrant(_ d: String) -> OAuthError { OAuthError(httpStatus: 400, code: "invalid_grant", description: d) }
    static func unsupportedGrantType() -> OAuthError {
        OAuthError(httpStatus: 400, code: "unsupported_grant_type", description: "grant_type must be authorization_code")
    }
    static func unsupportedResponseType() -> OAuthError {
        OAuthError(httpStatus: 400, code: "unsupported_response_type", description: "response_type must be code")
    }
    static func invalidScope() -> OAuthError { OAuthError(httpStatus: 400, code: "invalid_scope", description: "scope must contain openid") }
    static func loginRequired() -> OAuthError {
        OAuthError(httpStatus: 400, code: "login_required", description: "prompt=none: every login needs the user's M-Pin")
    }
    static func requestNotSupported() -> OAuthError {
        OAuthError(httpStatus: 400, code: "request_not_supported", description: "request objects are not supported")
    }
    static func requestURINotSupported() -> OAuthError {
        OAuthError(httpStatus: 400, code: "request_uri_not_supported", description: "request_uri is not supported")
    }
    static func registrationNotSupported() -> OAuthError {
        OAuthError(httpStatus: 400, code: "registration_not_supported", description: "registration is not supported")
    }
    /// RFC 6750 §3.1: a missing, unknown or expired Bearer token at the userinfo endpoint.
    static func invalidToken(_ d: String) -> OAuthError {
        var e = OAuthError(httpStatus: 401, code: "invalid_token", description: d)
        e.bearerChallenge = true
        return e
    }
    static func notFound(_ d: String) -> OAuthError { OAuthError(httpStatus: 404, code: "invalid_request", description: d) }

    static let noBearerToken = "no Bearer access token"

    /// A server fault, as OAuth clients expect it.
    static func serverError(_ e: ServerError) -> OAuthError {
        OAuthError(httpStatus: e.statusCode >= 500 ? e.statusCode : 500,
                   code: e.statusCode == 503 ? "temporarily_unavailable" : "server_error", description: e.message)
    }
}

/// The body of an OAuth error.
struct OAuthErrorBody: Codable, Sendable {
    var error: String
    var error_description: String
}

extension OAuthError: HTTPResponseError {
    var status: HTTPResponse.Status { .init(code: httpStatus) }

    func response(from request: Request, context: some RequestContext) -> Response { jsonResponse() }

    func jsonResponse() -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store", .pragma: "no-cache"]
        if basicChallenge { headers[.wwwAuthenticate] = #"Basic realm="mpin-server""# }
        if bearerChallenge {
            // RFC 6750 §3: no error attribute when the request carried no token at all.
            headers[.wwwAuthenticate] = description == Self.noBearerToken
                ? #"Bearer realm="mpin-server""# : #"Bearer realm="mpin-server", error="invalid_token""#
        }
        return JSONResponse(status: httpStatus, OAuthErrorBody(error: code, error_description: description),
                            headers: headers).response()
    }
}

extension HTTPField.Name {
    /// RFC 6749 §5.1: token responses carry `Pragma: no-cache` beside `Cache-Control: no-store`.
    static var pragma: Self { Self("Pragma")! }
    static var referrerPolicy: Self { Self("Referrer-Policy")! }
}
