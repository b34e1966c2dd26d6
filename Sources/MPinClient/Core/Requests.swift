internal import MPinJSON
internal import MPinWire

/// Which SDK request a response belongs to: selects the per-request status overrides of
/// docs/PROTOCOL.md §7.2 on top of the generic mapping of §7.1.
enum RequestContext {
    case generic
    case register
    /// A registration carrying an MFA access code (docs/MFA.md §8): 404 means the code is dead.
    case registerWithAccessCode
    /// `codeStatus` (docs/MFA.md §4): 404 means the access code is unknown, expired or used up.
    case codeStatus
    case clientSecret1
    case clientSecret2
    case timePermit
    case authenticate
    /// The platform's check of a fresh DVS signature (docs/MFA.md §14.3): 410 means the signing
    /// key is blocked, 404 that the platform knows no such key.
    case signatureCheck
    /// A relying party's check of a signature it was given (`verifySignature`, `mpinctl verify`):
    /// no PIN of its own is involved, so 410 says only that the key is blocked (docs/SECURITY.md §5).
    case signatureVerification
}

/// The outcome of one request: a JSON body (an empty object for an empty 200 body) or a status.
enum Reply {
    case ok(JSONValue, status: Int)
    case failed(MPinStatus, httpStatus: Int)
}

extension MPinSDK {
    /// Sends a request whose body is an MPinWire message (or JSON the client forwards as it
    /// came) and maps the answer to a status; see `send`.
    func request<Body: Encodable>(_ method: HTTPMethod, _ url: String, body: Body,
                                  context: RequestContext = .generic, extraHeaders: [String: String] = [:]) -> Reply {
        let bytes: [UInt8]
        do { bytes = try WireCoding.encode(body) } catch {
            return .failed(MPinStatus(.flowError, "the request to \(Self.redacted(url)) could not be encoded"), httpStatus: 0)
        }
        return send(method, url, body: bytes, context: context, extraHeaders: extraHeaders)
    }

    /// Sends a request without a body; see `send`.
    func request(_ method: HTTPMethod, _ url: String, context: RequestContext = .generic) -> Reply {
        send(method, url, body: nil, context: context)
    }

    /// As `request`, also returning the JSON object a refusal came with, if any: the final
    /// step's "blocked" answer (410) carries the verdict's signature there (PROTOCOL.md §4.5.1).
    func requestKeepingRefusalBody<Body: Encodable>(_ method: HTTPMethod, _ url: String, body: Body,
                                                    context: RequestContext) -> (reply: Reply, refusalBody: JSONValue?) {
        let bytes: [UInt8]
        do { bytes = try WireCoding.encode(body) } catch {
            return (.failed(MPinStatus(.flowError, "the request to \(Self.redacted(url)) could not be encoded"), httpStatus: 0), nil)
        }
        var refusalBody: JSONValue? = nil
        let reply = send(method, url, body: bytes, context: context) { response in
            if let value = try? JSONParser().parse(response.body), case .object = value { refusalBody = value }
        }
        return (reply, refusalBody)
    }

    /// As `requestKeepingRefusalBody`, for a request without a body (the time permit's
    /// "revoked" carries its signature there).
    func requestKeepingRefusalBody(_ method: HTTPMethod, _ url: String, context: RequestContext) -> (reply: Reply, refusalBody: JSONValue?) {
        var refusalBody: JSONValue? = nil
        let reply = send(method, url, body: nil, context: context) { response in
            if let value = try? JSONParser().parse(response.body), case .object = value { refusalBody = value }
        }
        return (reply, refusalBody)
    }

    /// Only HTTP 200 is success; a 200 body must be a JSON object (any Content-Type), as the
    /// SDK reads it. Callers read its fields with `WireCoding.lenient`. `refused` sees the
    /// response of any other status.
    private func send(_ method: HTTPMethod, _ url: String, body bytes: [UInt8]?, context: RequestContext,
                      extraHeaders: [String: String] = [:], refused: ((HTTPResponse) -> Void)? = nil) -> Reply {
        if let refusal = checkTrusted(url) { return .failed(refusal, httpStatus: 0) }
        var headers = customHeaders.merging(extraHeaders) { $1 }
        if !clientId.isEmpty { headers["X-MIRACL-Client-ID"] = clientId }
        if bytes != nil {
            if headers.keys.first(where: { $0.lowercased() == "content-type" }) == nil {
                headers["Content-Type"] = "application/json; charset=UTF-8"
            }
            if headers.keys.first(where: { $0.lowercased() == "accept" }) == nil { headers["Accept"] = "text/plain" }
        }
        let response: HTTPResponse
        do {
            response = try context_.transport.send(HTTPRequest(method: method, url: url, headers: headers, body: bytes))
        } catch {
            return .failed(Self.transportStatus(error), httpStatus: 0)
        }
        guard response.status == 200 else {
            refused?(response)
            return .failed(Self.httpStatus(response.status, context: context, url: url), httpStatus: response.status)
        }
        if response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return .ok(.object([]), status: 200)
        }
        guard let value = try? JSONParser().parse(response.body), case .object = value else {
            return .failed(MPinStatus(.responseParseError, "the response from \(Self.redacted(url)) is not a JSON object"),
                           httpStatus: 200)
        }
        return .ok(value, status: 200)
    }

    static func transportStatus(_ error: HTTPTransportError) -> MPinStatus {
        if case .untrustedDomain = error { return MPinStatus(.untrustedDomainError, error.description) }
        return MPinStatus(.networkError, error.description)
    }

    /// §7.1 and §7.2.
    static func httpStatus(_ code: Int, context: RequestContext, url: String) -> MPinStatus {
        let place = redacted(url)
        switch (context, code) {
        case (.register, 403), (.registerWithAccessCode, 403):
            return MPinStatus(.identityNotAuthorized, "registration refused (HTTP 403)")
        case (.registerWithAccessCode, 404), (.codeStatus, 404):
            return MPinStatus(.incorrectAccessNumber, "invalid or expired access code")
        case (.clientSecret1, 400), (.clientSecret1, 401):
            return MPinStatus(.identityNotVerified, "the identity is not verified yet (HTTP \(code))")
        case (.clientSecret2, 408): return MPinStatus(.requestExpired, "the client-secret request expired (HTTP 408)")
        case (.timePermit, 410): return MPinStatus(.revoked, "the identity has been revoked (HTTP 410)")
        case (.authenticate, 401): return MPinStatus(.incorrectPIN, "wrong PIN")
        case (.authenticate, 408): return MPinStatus(.requestExpired, "the authentication expired (HTTP 408)")
        case (.authenticate, 410): return MPinStatus(.incorrectPIN, "wrong PIN; the identity is now blocked")
        case (.authenticate, 412): return MPinStatus(.incorrectAccessNumber, "invalid or expired access number")
        case (.authenticate, 403): return MPinStatus(.identityNotAuthorized, "the identity is not authorised (HTTP 403)")
        case (.authenticate, 409): return MPinStatus(.clientSecretExpired)
        case (.signatureCheck, 410): return MPinStatus(.incorrectPIN, "wrong signing PIN; the signing key is now blocked")
        case (.signatureCheck, 404), (.signatureVerification, 404):
            return MPinStatus(.flowError, "the platform knows no such signing key")
        case (.signatureVerification, 410):
            return MPinStatus(.flowError, "invalid signature: the signing key is blocked, and the platform never saw this signature valid")
        default: break
        }
        switch code {
        case 406: return MPinStatus(.badUserAgent, "\(place) refused this client (HTTP 406)")
        // A rate limit says "not now", not "no": the PAM module answers PAM_AUTHINFO_UNAVAIL
        // (docs/SECURITY.md §6.7), as for a backend that cannot be reached.
        case 429: return MPinStatus(.networkError, "\(place) is busy: too many requests (HTTP 429)")
        case 300..<400: return MPinStatus(.networkError, "\(place) answered with a redirect (HTTP \(code))")
        case 400..<500: return MPinStatus(.httpRequestError, "\(place) refused the request (HTTP \(code))")
        case 500...: return MPinStatus(.httpServerError, "\(place) failed (HTTP \(code))")
        default: return MPinStatus(.httpServerError, "\(place) answered HTTP \(code), not 200")
        }
    }

    /// The URL for messages: without its query or fragment (signatures, OTTs) and without
    /// user information (`user:password@`).
    static func redacted(_ url: String) -> String {
        guard case .success(let origin) = URLOrigin.parse(url) else { return "a URL that is not absolute http(s)" }
        return origin.display + origin.path
    }

    /// With trusted domains set, only https URLs whose host is, or is below, one of them; once
    /// confined (`confine(toOriginOf:)`), only URLs of that origin.
    func checkTrusted(_ url: String) -> MPinStatus? {
        if let confinedOrigin {
            guard case .success(let parts) = URLOrigin.parse(url), parts.sameOrigin(as: confinedOrigin) else {
                return MPinStatus(.untrustedDomainError, "\(Self.redacted(url)) is not on the backend's origin "
                                  + "\(confinedOrigin.display), and TLS does not authenticate the backend (cacert or capath)")
            }
        }
        guard !trustedDomains.isEmpty else { return nil }
        guard case .success(let parts) = URLOrigin.parse(url), parts.scheme == "https" else {
            return MPinStatus(.untrustedDomainError, "\(Self.redacted(url)) is not an https URL of a trusted domain")
        }
        let host = parts.host.lowercased()
        let ok = trustedDomains.contains { d in host == d || host.hasSuffix("." + d) }
        return ok ? nil : MPinStatus(.untrustedDomainError, "\(parts.host) is not in a trusted domain")
    }
}


