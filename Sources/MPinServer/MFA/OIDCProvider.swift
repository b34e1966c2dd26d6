import Foundation
import Hummingbird
import Logging
import MPinCrypto
import MPinWire
import Synchronization

/// The MFA platform's server side (docs/MFA.md): sessions with access codes started by
/// `/authorize`, `codeStatus`, the service details, and the OpenID Connect code flow whose
/// logins are M-Pin authentications carrying the access code (the RPS's part is in
/// `RPS.pass2` and `RPS.mobileAuthenticate`).
struct OIDCProvider: Sendable {
    let storage: any ServerStorage
    let config: ServerConfig
    let key: OIDCKey
    /// `https` when the server serves TLS itself, else `http`.
    let scheme: String
    let logger: Logger
    /// The address the server listens on, the issuer without `publicBaseURL`.
    let listenBase: ListenBase
    /// Short codes of web logins per browser address (device mode's limit).
    let shortCodeLimit: AccessNumberRateLimit
    /// Look-ups of sessions by short code per caller address.
    let shortCodeLookupLimit: LookupRateLimit

    init(storage: any ServerStorage, config: ServerConfig, key: OIDCKey, scheme: String,
         listenBase: ListenBase = ListenBase(), logger: Logger) {
        self.listenBase = listenBase
        self.storage = storage
        self.config = config
        self.key = key
        self.scheme = scheme
        self.logger = logger
        let perMinute = config.accessNumberRequestsPerMinute ?? ServerConfig.defaultAccessNumberRequestsPerMinute
        shortCodeLimit = AccessNumberRateLimit(perMinute: perMinute)
        shortCodeLookupLimit = LookupRateLimit(perMinute: perMinute)
    }

    private var mfa: MFAConfig { config.mfa }

    /// The issuer and base URL (docs/MFA.md §7.2), from the configuration only, never from
    /// the request (docs/SECURITY.md §5: a Host header named the issuer): `publicBaseURL`, else the
    /// address the server listens on (`http://127.0.0.1:8005`); a server listening on every
    /// address (0.0.0.0, ::) without `publicBaseURL` has no issuer and refuses every OpenID
    /// endpoint that names it with 503.
    func issuer(_ request: Request) throws(OAuthError) -> String {
        if var base = config.publicBaseURL, !base.isEmpty {
            while base.hasSuffix("/") { base.removeLast() }
            return base
        }
        guard let base = listenBase.value else {
            throw OAuthError(httpStatus: 503, code: "temporarily_unavailable",
                             description: "the OpenID provider needs publicBaseURL in config.json when listening on every address")
        }
        return base
    }

    // MARK: Service details (§3.2) and codeStatus (§4)

    func serviceDetails(_ request: Request) throws(OAuthError) -> ServiceDetailsResponse {
        ServiceDetailsResponse(name: mfa.customerName, url: try issuer(request), rpsPrefix: config.rpsPrefix,
                               logoURL: mfa.customerLogoURL)
    }

    /// `client`: the caller's address; looking sessions up by short code is counted per address
    /// (device mode's access-number limit), so that short codes cannot be swept.
    func codeStatus(_ req: CodeStatusRequest, client: String = "unknown") async throws(ServerError) -> CodeStatusAnswer {
        let verb: CodeStatusVerb
        switch req.status {
        case "wid": verb = .wid
        case "abort": verb = .abort
        case "user":
            guard let user = req.userId, !user.isEmpty, user.utf8.count <= 256 else {
                throw ServerError.badRequest("BAD REQUEST. userId argument missing")
            }
            verb = .user(user)
        default: throw ServerError.badRequest("BAD REQUEST. Unknown status")
        }
        let code = req.wid.lowercased()
        let accessCodeHash: String
        if AccessCode.isAccessCode(code) {
            accessCodeHash = Secrets.hash(code)
        } else if AccessNumber.isValid(code) {
            guard shortCodeLookupLimit.admit(client, number: code) else { throw ServerError.tooManyRequests }
            // A web login's short code (§5.4) names its session as the access code does.
            guard let stored = try await run({ try await self.storage.webLogin(accessNumber: code, now: Date()) })
            else { throw ServerError.sessionNotFound }
            accessCodeHash = String(stored.dropFirst(AccessCode.storedPrefix.count))
        } else {
            throw ServerError.sessionNotFound
        }
        guard let view = try await run({ try await self.storage.codeStatus(accessCodeHash: accessCodeHash, verb: verb,
                                                                          now: Date()) }) else {
            throw ServerError.sessionNotFound
        }
        guard verb == .wid else { return .acknowledged }
        let described = try await run({ try await self.storage.webLoginDescription(accessCodeHash: accessCodeHash, now: Date()) })
        return .details(SessionDetailsResponse(prerollId: view.prerollID, appName: view.appName, appLogoURL: view.appLogoURL,
                                               customerId: config.appID, customerName: mfa.customerName,
                                               customerLogoURL: mfa.customerLogoURL, loginDescription: described))
    }

    // MARK: /authorize (§5)

    /// `client`: the browser's (or app's) address, which the page's short code describes.
    /// `form`: the body of a form `POST` (OIDC Core §3.1.2.1: a browser may post the request),
    /// whose parameters replace the query's.
    func authorize(_ request: Request, client: String = "unknown", form: String? = nil) async throws -> Response {
        guard let query = QueryParameters(form ?? request.uri.query) else { throw OAuthError.invalidRequest("malformed query") }
        var seen = Set<String>()
        for (name, _) in query.all where !seen.insert(name).inserted {
            throw OAuthError.invalidRequest("a parameter is given twice")
        }
        // Until the client and its redirect URI are known good, errors are answered here and
        // never redirected (RFC 6749 §4.1.2.1: an open redirector otherwise).
        guard let clientID = query["client_id"], !clientID.isEmpty, clientID.utf8.count <= 100 else {
            throw OAuthError.invalidClient("client_id missing", status: 400)
        }
        guard let app = try await oauthRun({ try await self.storage.app(clientID: clientID) }) else {
            throw OAuthError.invalidClient("unknown client_id", status: 400)
        }
        guard query["redirect_uri"] == app.redirectURI else {
            throw OAuthError.invalidRequest("redirect_uri is not the registered one")
        }
        try Self.checkClientHeader(request, clientID: clientID)
        // The app's own request (the SDK's GetAccessCode posts, or asks for JSON) learns of an
        // error from the 400; a browser is sent back to the client with it (§5.1).
        let wantsJSON = (request.method == .post && form == nil) || (request.headers[.accept] ?? "").contains("application/json")
        let state = query["state"]
        do {
            // "Start again" on the page is this request as a GET (a form POST's body as the query).
            let restart = "/authorize?" + (form ?? request.uri.query ?? "")
            return try await authorizeChecked(request, query: query, app: app, wantsJSON: wantsJSON, client: client,
                                              restart: restart)
        } catch {
            if wantsJSON { throw error }
            // The state goes back as it came, when it is one the server would have kept.
            let echoed = state.flatMap { Self.isPrintable($0, max: 512) ? $0 : nil } ?? ""
            let location = OAuthRedirect.url(app.redirectURI, ["error": error.code, "error_description": error.description,
                                                               "state": echoed])
            return Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
        }
    }

    /// The checks of a request whose client and redirect URI are known good, then the session.
    private func authorizeChecked(_ request: Request, query: QueryParameters, app: StoredApp, wantsJSON: Bool,
                                  client: String, restart: String) async throws(OAuthError) -> Response {
        guard query["response_type"] == "code" else { throw OAuthError.unsupportedResponseType() }
        // OIDC Core §6.1, §6.2, §7.2.1: passing a request object, by value or by reference, or
        // client metadata is refused rather than ignored.
        if query["request"] != nil { throw OAuthError.requestNotSupported() }
        if query["request_uri"] != nil { throw OAuthError.requestURINotSupported() }
        if query["registration"] != nil { throw OAuthError.registrationNotSupported() }
        guard let scope = query["scope"], scope.split(separator: " ").contains("openid") else { throw OAuthError.invalidScope() }
        // `state` is optional (RFC 6749 §4.1.1): PKCE, which is required, protects the code.
        let state = query["state"] ?? ""
        if query["state"] != nil, !Self.isPrintable(state, max: 512) { throw OAuthError.invalidRequest("state malformed") }
        let nonce = query["nonce"]
        if let nonce, !Self.isPrintable(nonce, max: 512) { throw OAuthError.invalidRequest("nonce malformed") }
        guard let challenge = query["code_challenge"], challenge.utf8.count == 43, Self.isBase64URL(challenge) else {
            throw OAuthError.invalidRequest("code_challenge missing or malformed")
        }
        guard query["code_challenge_method"] == "S256" else {
            throw OAuthError.invalidRequest("code_challenge_method must be S256")
        }
        if let mode = query["response_mode"], mode != "query" { throw OAuthError.invalidRequest("response_mode must be query") }
        let preroll = query["prerollid"] ?? ""
        guard preroll.utf8.count <= 256, !preroll.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw OAuthError.invalidRequest("prerollid malformed") }
        // OIDC Core §3.1.2.1: `none` stands alone, and since every login here is a fresh M-Pin
        // authentication on a device, the provider can never complete one without the user.
        if let prompt = query["prompt"] {
            let values = prompt.split(separator: " ")
            if values.contains("none") {
                guard values.count == 1 else { throw OAuthError.invalidRequest("prompt=none with other values") }
                throw OAuthError.loginRequired()
            }
        }

        let base = try issuer(request)
        let now = Date()
        let ttl = mfa.accessCodeTTLSeconds
        let accessCode = try oauthRandomHex(16), webOTT = try oauthRandomHex(16)
        let expires = now.addingTimeInterval(TimeInterval(ttl))
        let session = NewMFASession(accessCodeHash: Secrets.hash(accessCode), webOTTHash: Secrets.hash(webOTT),
                                    clientID: app.clientID, redirectURI: app.redirectURI, state: state, nonce: nonce,
                                    codeChallenge: challenge, prerollID: preroll, expires: expires)
        guard try await oauthRun({ try await self.storage.createSession(session) }) else {
            throw OAuthError.serverError(.internal("Session collision"))
        }
        let answer = AuthorizeResponse(qrURL: base + "#" + accessCode, accessCode: accessCode, webOTT: webOTT,
                                       ttlSeconds: ttl, expireTime: WireTime.milliseconds(now) + Int64(ttl) * 1000)
        if wantsJSON { return JSONResponse(answer, headers: [.cacheControl: "no-store"]).response() }
        let shortCode = await issueShortCode(accessCode: accessCode, appName: app.name, client: client, expires: expires,
                                             now: now)
        return LoginPage(appName: app.name, answer: answer, shortCode: shortCode, restartURL: restart).response()
    }

    /// A 7-digit access number (with its check digit, as device mode's) that stands for the
    /// session, for a person to type into `mpin approve` (§5.4); nil when none can be had (the
    /// page then offers the QR URL only). Counted per browser address like device mode's.
    private func issueShortCode(accessCode: String, appName: String, client: String, expires: Date, now: Date) async -> String? {
        guard shortCodeLimit.admit(client) else {
            logger.notice("web login short code refused", metadata: ["reason": "rate limit"])
            return nil
        }
        let description = AccessNumberDescription.sanitized("web login to \(appName) from browser \(client)")
        for _ in 0..<20 {
            guard let bytes = try? SystemRandom.bytes(4) else { return nil }
            let value = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
            guard value < 4_294_000_000 else { continue }  // a whole number of millions: no bias
            guard let number = AccessNumber.issue(body: Int(value % 1_000_000)) else { continue }
            let stored = try? await storage.createAccessNumber(wid: number, webOTTHash: AccessCode.storedPrefix + Secrets.hash(accessCode),
                                                               expires: expires, now: now, description: description)
            if stored == true { return number }
            if stored == nil { return nil }
        }
        return nil
    }

    /// The client id header (docs/MFA.md §1.2): either spelling; when present it must name the app.
    static func checkClientHeader(_ request: Request, clientID: String) throws(OAuthError) {
        let names: Set<String> = ["x-miracl-cid", "x-miracl-client-id"]
        let values = request.headers.filter { names.contains($0.name.canonicalName) }.map(\.value)
        if Set(values).count > 1 { throw OAuthError.invalidRequest("the client id headers differ") }
        if let v = values.first, v != clientID {
            throw OAuthError.invalidClient("client id header does not match", status: 400)
        }
    }

    /// `POST /authorize/status` (§5.3).
    func sessionStatus(_ req: SessionPollRequest) async throws(OAuthError) -> SessionPollResponse {
        let web = req.webOTT.lowercased()
        guard AccessCode.isAccessCode(web) else { throw OAuthError.notFound("no live session") }
        guard let poll = try await oauthRun({ try await self.storage.pollSession(webOTTHash: Secrets.hash(web), now: Date()) })
        else { throw OAuthError.notFound("no live session") }
        switch poll {
        case .pending: return SessionPollResponse(status: "pending", redirectURL: nil)
        case .done: return SessionPollResponse(status: "done", redirectURL: nil)
        case .authenticated(let url): return SessionPollResponse(status: "authenticated", redirectURL: url)
        case .refused: return SessionPollResponse(status: "refused", redirectURL: nil)
        }
    }

    // MARK: /oidc/token (§7)

    func token(_ request: Request, body: String) async throws(OAuthError) -> TokenResponse {
        guard let pairs = FormEncoding.decode(body) else { throw OAuthError.invalidRequest("malformed form body") }
        var form: [String: String] = [:]
        for (name, value) in pairs {
            guard form.updateValue(value, forKey: name) == nil else { throw OAuthError.invalidRequest("a parameter is given twice") }
        }
        guard let grantType = form["grant_type"] else { throw OAuthError.invalidRequest("grant_type missing") }
        guard grantType == "authorization_code" else { throw OAuthError.unsupportedGrantType() }

        // Client authentication: exactly one of client_secret_basic and client_secret_post.
        let basic = request.headers[.authorization].flatMap { h -> String? in
            h.count > 6 && h.prefix(6).lowercased() == "basic " ? String(h.dropFirst(6)) : nil
        }
        let clientID: String, secret: String
        if let basic {
            guard form["client_secret"] == nil else { throw OAuthError.invalidRequest("more than one client authentication") }
            guard let data = Data(base64Encoded: basic.trimmingCharacters(in: .whitespaces)),
                  let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":"),
                  let id = Self.formDecode(String(text[..<colon])), let s = Self.formDecode(String(text[text.index(after: colon)...]))
            else { throw OAuthError.invalidClient("malformed Basic credentials") }
            if let formID = form["client_id"], formID != id { throw OAuthError.invalidRequest("client_id differs") }
            clientID = id; secret = s
        } else {
            guard let id = form["client_id"], let s = form["client_secret"] else {
                throw OAuthError.invalidClient("client authentication required")
            }
            clientID = id; secret = s
        }
        guard !clientID.isEmpty, clientID.utf8.count <= 100, secret.utf8.count <= 256,
              let app = try await oauthRun({ try await self.storage.app(clientID: clientID) }),
              Secrets.equal(Secrets.hash(secret), app.secretHash) else {
            throw OAuthError.invalidClient("client authentication failed")
        }

        guard let code = form["code"], !code.isEmpty, code.utf8.count <= 256 else { throw OAuthError.invalidRequest("code missing") }
        guard let redirectURI = form["redirect_uri"] else { throw OAuthError.invalidRequest("redirect_uri missing") }
        guard let verifier = form["code_verifier"], (43...128).contains(verifier.utf8.count),
              verifier.utf8.allSatisfy({ Self.isVerifierByte($0) }) else {
            throw OAuthError.invalidRequest("code_verifier missing or malformed")
        }
        let now = Date()
        let redemption = try await oauthRun({ try await self.storage.redeem(codeHash: Secrets.hash(code), clientID: clientID,
                                                                            now: now) })
        guard case .granted(let grant) = redemption else { throw OAuthError.invalidGrant("code is invalid, expired or used") }
        guard grant.redirectURI == redirectURI else { throw OAuthError.invalidGrant("redirect_uri does not match") }
        let computed = Base64URL.encode(MPinCrypto.SHA256.hash(Array(verifier.utf8)))
        guard Secrets.equal(computed, grant.codeChallenge) else { throw OAuthError.invalidGrant("code_verifier does not match") }

        let iat = Int(now.timeIntervalSince1970)
        let ttl = mfa.idTokenTTLSeconds
        let email = Self.email(grant.userID)
        let claims = IDTokenClaims(iss: try issuer(request), sub: grant.userID, aud: clientID, exp: iat + ttl, iat: iat,
                                   auth_time: Int(grant.authTime.timeIntervalSince1970), nonce: grant.nonce, email: email,
                                   amr: ["mpin"])
        let idToken: String
        do { idToken = try await key.sign(claims, alg: app.idTokenAlg) } catch {
            throw OAuthError.serverError(.internal("Signing failed"))
        }
        // The access token serves the userinfo endpoint only. It is kept beside the DVS
        // registration tokens but under a hash of its own domain, so that it enrols no signing
        // key: any relying party the user logs in to gets one, and a signing key must be the
        // user's own act, a PIN proof at `dvsRegToken` (docs/SECURITY.md §5; docs/MFA.md §14.1).
        let accessToken = try Self.randomToken()
        _ = try await oauthRun({ try await self.storage.issueDVSToken(
            tokenHash: Self.accessTokenHash(accessToken), userID: grant.userID,
            expires: now.addingTimeInterval(TimeInterval(ttl))) })
        logger.info("id token issued", metadata: ["client": "\(clientID)"])
        return TokenResponse(access_token: accessToken, token_type: "Bearer", expires_in: ttl, id_token: idToken)
    }

    // MARK: Discovery (§7.2, §7.3)

    func discovery(_ request: Request) throws(OAuthError) -> OpenIDConfiguration {
        let iss = try issuer(request)
        return OpenIDConfiguration(
            issuer: iss, authorization_endpoint: iss + "/authorize", token_endpoint: iss + "/oidc/token",
            jwks_uri: iss + "/oidc/jwks", userinfo_endpoint: iss + "/oidc/userinfo",
            response_types_supported: ["code"], response_modes_supported: ["query"],
            grant_types_supported: ["authorization_code"],
            subject_types_supported: ["public"], id_token_signing_alg_values_supported: OIDCKey.algorithms,
            token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
            code_challenge_methods_supported: ["S256"], scopes_supported: ["openid", "email"],
            claims_supported: ["sub", "email", "iss", "aud", "exp", "iat", "auth_time", "nonce", "amr"],
            request_parameter_supported: false, request_uri_parameter_supported: false,
            claims_parameter_supported: false)
    }

    var jwks: JWKSet { JWKSet(keys: key.jwks) }

    // MARK: UserInfo (§7.4)

    /// `GET`/`POST /oidc/userinfo` with `Authorization: Bearer <access token>` (OIDC Core §5.3,
    /// RFC 6750 §2.1): the token's user as `sub`, and `email` when the user id is one.
    func userinfo(_ request: Request) async throws(OAuthError) -> UserInfoResponse {
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer "
        else { throw OAuthError.invalidToken(OAuthError.noBearerToken) }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard (1...256).contains(token.utf8.count),
              let user = try await oauthRun({ try await self.storage.dvsTokenUser(tokenHash: Self.accessTokenHash(token),
                                                                                  now: Date()) })
        else { throw OAuthError.invalidToken("the access token is unknown or expired") }
        return UserInfoResponse(sub: user, email: Self.email(user))
    }

    /// How an access token is kept: SHA-256 of it in a domain of its own, never equal to the
    /// hash of a DVS registration token (SHA-256 of the token alone), which `dvsregister` looks up.
    static func accessTokenHash(_ token: String) -> String { Secrets.hash("oidc-access-token:" + token) }

    /// The user id as an e-mail address, when it is one (one `@`).
    static func email(_ userID: String) -> String? { userID.filter { $0 == "@" }.count == 1 ? userID : nil }

    // MARK: Helpers

    static func isPrintable(_ s: String, max: Int) -> Bool {
        (1...max).contains(s.utf8.count) && s.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    static func isBase64URL(_ s: String) -> Bool {
        s.utf8.allSatisfy { b in
            switch b {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x5F: return true
            default: return false
            }
        }
    }

    /// RFC 7636 §4.1: `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
    static func isVerifierByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: return true
        default: return false
        }
    }

    /// One form-urlencoded component (RFC 6749 §2.3.1 encodes Basic credentials so).
    static func formDecode(_ s: String) -> String? { FormEncoding.decode("v=" + s)?.first?.1 }

    static func randomToken() throws(OAuthError) -> String {
        do { return try Secrets.randomBase64URL(32) } catch { throw OAuthError.serverError(error) }
    }

    private func oauthRandomHex(_ n: Int) throws(OAuthError) -> String {
        do { return try Secrets.randomHex(n) } catch { throw OAuthError.serverError(error) }
    }

    /// A storage call whose failure is an OAuth `server_error` / `temporarily_unavailable`.
    private func oauthRun<T: Sendable>(_ body: @Sendable () async throws -> T) async throws(OAuthError) -> T {
        do { return try await body() } catch { throw OAuthError.serverError(.unavailable("Storage unavailable")) }
    }

    /// A storage call whose failure is the RPS's 503.
    private func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws(ServerError) -> T {
        do { return try await body() } catch { throw ServerError.unavailable("Storage unavailable") }
    }
}

// MARK: Wire bodies of the MFA endpoints

/// Empty JSON object answer.
struct EmptyObject: Codable, Sendable, Equatable {}

enum CodeStatusAnswer: Sendable {
    case details(SessionDetailsResponse)
    case acknowledged
}

struct SessionPollRequest: Codable, Sendable {
    var webOTT: String
}

struct SessionPollResponse: Codable, Sendable, Equatable {
    var status: String
    var redirectURL: String?
}

/// `/oidc/token` answer (RFC 6749 §5.1, OIDC Core §3.1.3.3).
struct TokenResponse: Codable, Sendable, Equatable {
    var access_token: String
    var token_type: String
    var expires_in: Int
    var id_token: String
}

/// `/.well-known/openid-configuration` (OIDC Discovery §3).
struct OpenIDConfiguration: Codable, Sendable, Equatable {
    var issuer: String
    var authorization_endpoint: String
    var token_endpoint: String
    var jwks_uri: String
    var userinfo_endpoint: String
    var response_types_supported: [String]
    var response_modes_supported: [String]
    var grant_types_supported: [String]
    var subject_types_supported: [String]
    var id_token_signing_alg_values_supported: [String]
    var token_endpoint_auth_methods_supported: [String]
    var code_challenge_methods_supported: [String]
    var scopes_supported: [String]
    var claims_supported: [String]
    var request_parameter_supported: Bool
    var request_uri_parameter_supported: Bool
    var claims_parameter_supported: Bool
}

/// `/oidc/userinfo` answer (OIDC Core §5.3.2).
struct UserInfoResponse: Codable, Sendable, Equatable {
    var sub: String
    var email: String?
}

/// `scheme://host:port` of the listening socket, set once the server listens; nil before, and
/// for a wildcard address (0.0.0.0, ::), which names no host a client could reach.
final class ListenBase: Sendable {
    private let box = Mutex<String?>(nil)

    var value: String? { box.withLock { $0 } }

    func set(scheme: String, host: String, port: Int) {
        guard !["", "0.0.0.0", "::", "[::]", "*"].contains(host) else { return }
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        box.withLock { $0 = "\(scheme)://\(name):\(port)" }
    }
}
