import Foundation
import JWTKit
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// The MFA platform and OpenID Connect code flow of docs/MFA.md over real HTTP on 127.0.0.1:
/// `/authorize` → codeStatus → an M-Pin authentication (MPinCrypto, as the SDK) carrying the
/// access code → `/oidc/token` → the ID token verified against `/oidc/jwks`.
class OIDCFlowTests: XCTestCase {
    /// The database the tests run on (`PostgresStorageTests.swift` runs them on PostgreSQL).
    class var storage: TestStorage { .sqlite }

    static let redirectURI = "https://wiki.example/cb"

    /// A running server with one application and one registered user.
    struct Fixture {
        let server: TestServer
        let app: NewAppCredentials
        var user: MPinTestClient
        var http: HTTPClient { server.client }
        var base: String { http.base }
    }

    func fixture(adjust: (inout ServerConfig) -> Void = { _ in }) async throws -> Fixture {
        let server = try await TestServer(storage: Self.storage, adjust: adjust)
        try await server.start()
        let app = try await server.appAdmin()
            .add(name: "Wiki", redirectURI: Self.redirectURI, logoURL: "https://wiki.example/logo.png")
        var user = MPinTestClient(http: server.client)
        try await user.registerFully("alice@example.com", pin: "1234")
        return Fixture(server: server, app: app, user: user)
    }

    // MARK: Helpers

    static func form(_ pairs: KeyValuePairs<String, String>) -> String {
        FormEncoding.encode(pairs.map { ($0.key, $0.value) })
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A PKCE pair (RFC 7636): a 43-character verifier and its S256 challenge.
    static func pkce() throws -> (verifier: String, challenge: String) {
        let verifier = base64URL(try SystemRandom.bytes(32))
        return (verifier, base64URL(MPinCrypto.SHA256.hash(Array(verifier.utf8))))
    }

    static func authorizeQuery(clientID: String, redirectURI: String = redirectURI, state: String = "st-1",
                               nonce: String? = "n-0S6", challenge: String, extra: String = "") -> String {
        var q = "response_type=code&client_id=\(FormEncoding.escape(clientID))&redirect_uri=\(FormEncoding.escape(redirectURI))"
            + "&scope=openid%20email&state=\(FormEncoding.escape(state))&code_challenge=\(challenge)&code_challenge_method=S256"
        if let nonce { q += "&nonce=\(FormEncoding.escape(nonce))" }
        return q + extra
    }

    /// `POST /authorize` as the SDK's GetAccessCode does it.
    func startSession(_ f: Fixture, challenge: String, nonce: String? = "n-0S6") async throws -> (accessCode: String, webOTT: String) {
        let r = try await f.http.send("POST", "/authorize?" + Self.authorizeQuery(clientID: f.app.clientId, nonce: nonce,
                                                                                challenge: challenge),
                                      body: Data("{}".utf8), headers: ["X-MIRACL-CID": f.app.clientId])
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let o = try XCTUnwrap(r.object)
        let code = try XCTUnwrap(o["accessCode"]?.string)
        XCTAssertEqual(o["qrURL"]?.string, f.base + "#" + code)
        return (code, try XCTUnwrap(o["webOTT"]?.string))
    }

    func codeStatus(_ f: Fixture, _ body: [String: String]) async throws -> HTTPResult {
        try await f.http.post("/rps/codeStatus", body)
    }

    /// Passes 1 and 2 with the access code as WID, then the mobile final step.
    func authenticate(_ f: Fixture, pin: String = "1234", accessCode: String) async throws -> HTTPResult {
        let (p2, _) = try await f.user.passes(pin: pin, wid: accessCode)
        return try await f.http.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2)))
    }

    /// A whole authorization up to the code: (code, verifier).
    func authorizationCode(_ f: Fixture) async throws -> (code: String, verifier: String) {
        let p = try Self.pkce()
        let (accessCode, _) = try await startSession(f, challenge: p.challenge)
        let r = try await authenticate(f, accessCode: accessCode)
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        return (try XCTUnwrap(r.object?["code"]?.string), p.verifier)
    }

    func token(_ f: Fixture, code: String, verifier: String, redirectURI: String = redirectURI,
                       secret: String? = nil, basic: Bool = true) async throws -> HTTPResult {
        let secret = secret ?? f.app.clientSecret
        if basic {
            let credentials = Data("\(FormEncoding.escape(f.app.clientId)):\(FormEncoding.escape(secret))".utf8).base64EncodedString()
            return try RawHTTP.send(f.base, "POST", "/oidc/token", body: Data(Self.form([
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "code_verifier": verifier,
            ]).utf8), headers: ["Authorization": "Basic " + credentials,
                                "Content-Type": "application/x-www-form-urlencoded"])
        }
        return try RawHTTP.send(f.base, "POST", "/oidc/token", body: Data(Self.form([
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "code_verifier": verifier,
            "client_id": f.app.clientId, "client_secret": secret,
        ]).utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    func assertOAuthError(_ r: HTTPResult, _ status: Int, _ error: String, file: StaticString = #filePath,
                                  line: UInt = #line) {
        XCTAssertEqual(r.status, status, String(decoding: r.body, as: UTF8.self), file: file, line: line)
        XCTAssertEqual(r.object?["error"]?.string, error, file: file, line: line)
        XCTAssertNotNil(r.object?["error_description"]?.string, file: file, line: line)
    }

    /// The claims a relying party reads, verified by jwt-kit against the published JWKS.
    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var exp: Int
        var iat: Int
        var auth_time: Int
        var nonce: String?
        var email: String?
        var amr: [String]
        func verify(using algorithm: some JWTAlgorithm) async throws {
            if exp <= Int(Date().timeIntervalSince1970) { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "exp") }
        }
    }

    // MARK: Tests

    /// The whole code flow, both client authentications, and the ID token checked against
    /// `/oidc/jwks`: signature, iss, aud, sub, email, nonce, lifetimes.
    func testCodeFlowEndToEnd() async throws {
        let f = try await fixture()
        let server = f.server
        do {
            let awaited1 = try await f.http.get("/.well-known/openid-configuration").object
            let discovery = try XCTUnwrap(awaited1)
            XCTAssertEqual(discovery["issuer"]?.string, f.base)
            XCTAssertEqual(discovery["token_endpoint"]?.string, f.base + "/oidc/token")
            XCTAssertEqual(discovery["jwks_uri"]?.string, f.base + "/oidc/jwks")
            let service = try await f.http.get("/service").decode(ServiceDetailsResponse.self)
            XCTAssertEqual(service.type, "online")
            XCTAssertEqual(service.url, f.base)
            XCTAssertEqual(service.rps_prefix, "rps")
            let settings = try await f.http.get("/rps/clientSettings").decode(ClientSettings.self)
            XCTAssertEqual(settings.codeStatusURL, "/rps/codeStatus")

            let p = try Self.pkce()
            let (accessCode, webOTT) = try await startSession(f, challenge: p.challenge)
            XCTAssertEqual(accessCode.count, 32)

            // The device: session details, then the identity it is about to use.
            let details = try await codeStatus(f, ["status": "wid", "wid": accessCode])
            XCTAssertEqual(details.status, 200)
            let d = try XCTUnwrap(details.object)
            XCTAssertEqual(d["appName"]?.string, "Wiki")
            XCTAssertEqual(d["appLogoURL"]?.string, "https://wiki.example/logo.png")
            XCTAssertEqual(d["customerId"]?.string, settings.appID)
            XCTAssertEqual(d["prerollId"]?.string, "")
            let awaited2 = try await codeStatus(f, ["status": "user", "wid": accessCode, "userId": "alice@example.com"]).status
            XCTAssertEqual(awaited2, 200)
            let awaited3 = try await f.http.post("/authorize/status", ["webOTT": webOTT]).object?["status"]?.string
            XCTAssertEqual(awaited3, "pending")

            // A wrong PIN is counted and leaves the session usable; the right one authorizes.
            let awaited4 = try await authenticate(f, pin: "9999", accessCode: accessCode).status
            XCTAssertEqual(awaited4, 401)
            let auth = try await authenticate(f, accessCode: accessCode)
            XCTAssertEqual(auth.status, 200, String(decoding: auth.body, as: UTF8.self))
            let code = try XCTUnwrap(auth.object?["code"]?.string)
            let redirect = try XCTUnwrap(auth.object?["redirectURL"]?.string)
            XCTAssertEqual(redirect, Self.redirectURI + "?code=" + code + "&state=st-1")
            XCTAssertEqual(try auth.decode(AuthorizationCodeResponse.self).code, code)  // what the client reads

            // The browser gets the same redirect, once.
            let awaited5 = try await f.http.post("/authorize/status", ["webOTT": webOTT]).object
            let poll = try XCTUnwrap(awaited5)
            XCTAssertEqual(poll["status"]?.string, "authenticated")
            XCTAssertEqual(poll["redirectURL"]?.string, redirect)
            let awaited6 = try await f.http.post("/authorize/status", ["webOTT": webOTT]).object?["status"]?.string
            XCTAssertEqual(awaited6, "done")

            // The access code is used up.
            let awaited7 = try await codeStatus(f, ["status": "wid", "wid": accessCode]).status
            XCTAssertEqual(awaited7, 404)
            let awaited8 = try await authenticate(f, accessCode: accessCode).status
            XCTAssertEqual(awaited8, 412)

            let t = try await token(f, code: code, verifier: p.verifier)
            XCTAssertEqual(t.status, 200, String(decoding: t.body, as: UTF8.self))
            XCTAssertEqual(t.headers["cache-control"], "no-store")
            let tokens = try XCTUnwrap(t.object)
            XCTAssertEqual(tokens["token_type"]?.string, "Bearer")
            let idToken = try XCTUnwrap(tokens["id_token"]?.string)

            let jwksText = String(decoding: try await f.http.get("/oidc/jwks").body, as: UTF8.self)
            let keys = try await JWTKeyCollection().add(jwksJSON: jwksText)
            let claims = try await keys.verify(idToken, as: Claims.self)
            XCTAssertEqual(claims.iss, f.base)
            XCTAssertEqual(claims.sub, "alice@example.com")
            XCTAssertEqual(claims.email, "alice@example.com")
            XCTAssertEqual(claims.aud, f.app.clientId)
            XCTAssertEqual(claims.nonce, "n-0S6")
            XCTAssertEqual(claims.exp - claims.iat, 600)
            XCTAssertEqual(claims.amr, ["mpin"])
            XCTAssertLessThanOrEqual(abs(claims.iat - Int(Date().timeIntervalSince1970)), 5)

            // A token from another key does not verify against the published one.
            guard case .array(let published)? = try await f.http.get("/oidc/jwks").object?["keys"],
                  case .object(let jwk)? = published.first, let kid = jwk["kid"]?.string else {
                return XCTFail("no kid in the JWKS")
            }
            let stranger = JWTKeyCollection()
            await stranger.add(ecdsa: ES256PrivateKey(), kid: JWKIdentifier(string: kid))
            let forged = try await stranger.sign(claims)
            do {
                _ = try await keys.verify(forged, as: Claims.self)
                XCTFail("a token signed by another key verified")
            } catch {}

            // One use: the same code again is refused.
            assertOAuthError(try await token(f, code: code, verifier: p.verifier), 400, "invalid_grant")

            // client_secret_post, and a login without nonce or email.
            let second = try await authorizationCode(f)
            let t2 = try await token(f, code: second.code, verifier: second.verifier, basic: false)
            XCTAssertEqual(t2.status, 200, String(decoding: t2.body, as: UTF8.self))
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// The ID token checked by an implementation that shares nothing with this server:
    /// Debian's python3-jwcrypto, given only the issuer URL (Tests/OIDC/verify_id_token.py).
    /// A token with a changed claim, a changed signature, another audience or another nonce fails.
    func testIDTokenVerifiesWithAnIndependentJOSEImplementation() async throws {
        let f = try await fixture()
        do {
            let (code, verifier) = try await authorizationCode(f)
            let t = try await token(f, code: code, verifier: verifier)
            let idToken = try XCTUnwrap(t.object?["id_token"]?.string)
            let ok = try Self.pythonVerify(idToken, issuer: f.base, clientID: f.app.clientId, nonce: "n-0S6")
            XCTAssertEqual(ok.status, 0, ok.stderr)
            XCTAssertEqual(ok.stdout, "sub=alice@example.com\n")

            let parts = idToken.split(separator: ".").map(String.init)
            XCTAssertEqual(parts.count, 3)
            var claims = try XCTUnwrap(Self.base64URLDecode(parts[1]))
            claims = Array(String(decoding: claims, as: UTF8.self)
                .replacingOccurrences(of: "alice@example.com", with: "mallory@example.com").utf8)
            let changedClaim = [parts[0], Self.base64URL(claims), parts[2]].joined(separator: ".")
            var signature = try XCTUnwrap(Self.base64URLDecode(parts[2]))
            signature[10] ^= 1
            let changedSignature = [parts[0], parts[1], Self.base64URL(signature)].joined(separator: ".")
            for (token, clientID, nonce, what) in [(changedClaim, f.app.clientId, "n-0S6", "a changed claim"),
                                                   (changedSignature, f.app.clientId, "n-0S6", "a changed signature"),
                                                   (idToken, "cid-another", "n-0S6", "another audience"),
                                                   (idToken, f.app.clientId, "n-other", "another nonce")] {
                let r = try Self.pythonVerify(token, issuer: f.base, clientID: clientID, nonce: nonce)
                XCTAssertEqual(r.status, 1, "\(what) must not verify: \(r.stdout)")
                XCTAssertTrue(r.stderr.hasPrefix("invalid: "), r.stderr)
            }
        } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }

    /// Runs the independent verifier with Debian's python3 (make deps installs python3-jwcrypto).
    static func pythonVerify(_ token: String, issuer: String, clientID: String, nonce: String,
                             alg: String = "RS256") throws -> (status: Int32, stdout: String, stderr: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("OIDC/verify_id_token.py").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [script, issuer, clientID, nonce, alg]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = errors
        try p.run()
        input.fileHandleForWriting.write(Data(token.utf8))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func base64URLDecode(_ s: String) -> [UInt8]? {
        var b = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b.count % 4 != 0 { b += "=" }
        return Data(base64Encoded: b).map { Array($0) }
    }

    /// Wrong client secret, wrong PKCE verifier, wrong redirect_uri, reuse, expiry.
    func testTokenEndpointRefusals() async throws {
        let f = try await fixture { $0.mfaSettings = { var s = MFASettings(); s.authzCodeTTLSeconds = 1; return s }() }
        do {
            // A wrong secret is refused before the code is looked at, so the code survives it.
            let a = try await authorizationCode(f)
            let wrongSecret = try await token(f, code: a.code, verifier: a.verifier, secret: "not-the-secret")
            assertOAuthError(wrongSecret, 401, "invalid_client")
            assertOAuthError(try await token(f, code: a.code, verifier: a.verifier, secret: "x", basic: false), 401, "invalid_client")
            // A wrong verifier uses the code up: the right one cannot follow.
            let wrongVerifier = try Self.pkce().verifier
            assertOAuthError(try await token(f, code: a.code, verifier: wrongVerifier), 400, "invalid_grant")
            assertOAuthError(try await token(f, code: a.code, verifier: a.verifier), 400, "invalid_grant")

            let b = try await authorizationCode(f)
            assertOAuthError(try await token(f, code: b.code, verifier: b.verifier, redirectURI: "https://wiki.example/other"),
                             400, "invalid_grant")

            let c = try await authorizationCode(f)
            try await Task.sleep(nanoseconds: 1_300_000_000)
            assertOAuthError(try await token(f, code: c.code, verifier: c.verifier), 400, "invalid_grant")

            assertOAuthError(try await token(f, code: "made-up", verifier: a.verifier), 400, "invalid_grant")
        } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }

    /// Access codes: expiry, abort, a session bound to another user, single use.
    func testAccessCodeLifetimeAndBinding() async throws {
        let f = try await fixture { $0.mfaSettings = { var s = MFASettings(); s.accessCodeTTLSeconds = 1; return s }() }
        do {
            let p = try Self.pkce()
            let expiring = try await startSession(f, challenge: p.challenge)
            try await Task.sleep(nanoseconds: 1_300_000_000)
            let awaited9 = try await codeStatus(f, ["status": "wid", "wid": expiring.accessCode]).status
            XCTAssertEqual(awaited9, 404)
            let awaited10 = try await authenticate(f, accessCode: expiring.accessCode).status
            XCTAssertEqual(awaited10, 412)
            let awaited11 = try await f.http.post("/authorize/status", ["webOTT": expiring.webOTT]).status
            XCTAssertEqual(awaited11, 404)

            let aborted = try await startSession(f, challenge: p.challenge)
            let awaited12 = try await codeStatus(f, ["status": "abort", "wid": aborted.accessCode]).status
            XCTAssertEqual(awaited12, 200)
            let awaited13 = try await codeStatus(f, ["status": "wid", "wid": aborted.accessCode]).status
            XCTAssertEqual(awaited13, 404)
            let awaited14 = try await authenticate(f, accessCode: aborted.accessCode).status
            XCTAssertEqual(awaited14, 412)

            let someoneElse = try await startSession(f, challenge: p.challenge)
            let awaited15 = try await codeStatus(f, ["status": "user", "wid": someoneElse.accessCode, "userId": "bob"]).status
            XCTAssertEqual(awaited15, 200)
            let awaited16 = try await authenticate(f, accessCode: someoneElse.accessCode).status
            XCTAssertEqual(awaited16, 412)
        } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }

    /// Bad input to every new endpoint: a 4xx with a JSON error body, never a 5xx.
    func testBadInputGetsJSON4xx() async throws {
        let f = try await fixture()
        do {
            let p = try Self.pkce()
            let id = f.app.clientId
            let good = Self.authorizeQuery(clientID: id, challenge: p.challenge)
            // Answered directly, to the app and the browser alike: the client or its redirect URI is
            // not known good, or the query cannot be read.
            let directCases: [(String, Int, String)] = [
                (Self.authorizeQuery(clientID: "cid-unknown", challenge: p.challenge), 400, "invalid_client"),
                (good.replacingOccurrences(of: "client_id=\(id)", with: "client_id="), 400, "invalid_client"),
                (Self.authorizeQuery(clientID: id, redirectURI: "https://evil.example/cb", challenge: p.challenge), 400, "invalid_request"),
                (Self.authorizeQuery(clientID: id, redirectURI: Self.redirectURI + "/", challenge: p.challenge), 400, "invalid_request"),
                (good + "&state=again", 400, "invalid_request"),
                (good + "&x=%zz", 400, "invalid_request"),
                ("", 400, "invalid_client"),
            ]
            for (query, status, error) in directCases {
                assertOAuthError(try await f.http.send("POST", "/authorize?" + query), status, error)
                assertOAuthError(try RawHTTP.send(f.base, "GET", "/authorize?" + query), status, error)
            }
            // The rest: a 400 to the app (POST), a redirect to the client for a browser (the
            // redirects are checked in testAuthorizeErrorsAreRedirectedToTheRegisteredClient).
            let appCases: [(String, Int, String)] = [
                (good.replacingOccurrences(of: "response_type=code", with: "response_type=token"), 400, "unsupported_response_type"),
                (good.replacingOccurrences(of: "scope=openid%20email", with: "scope=email"), 400, "invalid_scope"),
                (good.replacingOccurrences(of: "code_challenge_method=S256", with: "code_challenge_method=plain"), 400, "invalid_request"),
                (good.replacingOccurrences(of: "code_challenge=\(p.challenge)", with: "code_challenge=short"), 400, "invalid_request"),
                (good.replacingOccurrences(of: "nonce=n-0S6", with: "nonce=%01"), 400, "invalid_request"),
            ]
            for (query, status, error) in appCases {
                assertOAuthError(try await f.http.send("POST", "/authorize?" + query), status, error)
                let browser = try RawHTTP.send(f.base, "GET", "/authorize?" + query)
                XCTAssertEqual(browser.status, 302, query)
                XCTAssertTrue(browser.headers["location"]?.hasPrefix(Self.redirectURI + "?error=" + error + "&") ?? false,
                              browser.headers["location"] ?? "no Location")
            }
            assertOAuthError(try await f.http.send("POST", "/authorize?" + good, headers: ["X-MIRACL-Client-ID": "cid-other"]),
                             400, "invalid_client")
            assertOAuthError(try await f.http.send("POST", "/authorize?" + good,
                                                   headers: ["X-MIRACL-Client-ID": id, "X-MIRACL-CID": "cid-other"]),
                             400, "invalid_request")
            // The same request with a matching header (this repository's client spelling) works.
            let awaited17 = try await f.http.send("POST", "/authorize?" + good, headers: ["X-MIRACL-Client-ID": id]).status
            XCTAssertEqual(awaited17, 200)
            let page = try await f.http.get("/authorize?" + good)
            XCTAssertEqual(page.status, 200)
            XCTAssertTrue(page.headers["content-type"]?.hasPrefix("text/html") ?? false)

            let formHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
            let basic = "Basic " + Data("\(id):\(f.app.clientSecret)".utf8).base64EncodedString()
            let tokenCases: [(String, [String: String], Int, String)] = [
                ("", formHeaders, 400, "invalid_request"),
                ("grant_type=password", formHeaders, 400, "unsupported_grant_type"),
                ("grant_type=authorization_code&code=x&redirect_uri=y&code_verifier=" + p.verifier, formHeaders, 401, "invalid_client"),
                ("grant_type=authorization_code&code=x", ["Authorization": "Basic !!!"], 401, "invalid_client"),
                ("grant_type=authorization_code&code=x&client_secret=s", ["Authorization": basic], 400, "invalid_request"),
                ("grant_type=authorization_code&redirect_uri=y&code_verifier=" + p.verifier, ["Authorization": basic], 400, "invalid_request"),
                ("grant_type=authorization_code&code=x&redirect_uri=y&code_verifier=short", ["Authorization": basic], 400, "invalid_request"),
                ("grant_type=authorization_code&code=x&code=y", ["Authorization": basic], 400, "invalid_request"),
                ("grant_type=%zz", formHeaders, 400, "invalid_request"),
                ("{\"grant_type\": \"authorization_code\"}", [:], 400, "invalid_request"),
            ]
            for (body, headers, status, error) in tokenCases {
                assertOAuthError(try RawHTTP.send(f.base, "POST", "/oidc/token", body: Data(body.utf8), headers: headers), status, error)
            }

            for body in ["not json", "{}", #"{"webOTT": 5}"#] {
                assertOAuthError(try await f.http.send("POST", "/authorize/status", body: Data(body.utf8)), 400, "invalid_request")
            }
            assertOAuthError(try await f.http.post("/authorize/status", ["webOTT": String(repeating: "a", count: 32)]), 404, "invalid_request")
            assertOAuthError(try await f.http.post("/authorize/status", ["webOTT": "zz"]), 404, "invalid_request")

            let code = String(repeating: "b", count: 32)
            let statusCases: [(String, Int)] = [
                ("not json", 400), ("{}", 400), (#"{"status": "wid"}"#, 400), (#"{"status": 1, "wid": "x"}"#, 400),
                (#"{"status": "nonsense", "wid": "\#(code)"}"#, 400), (#"{"status": "user", "wid": "\#(code)"}"#, 400),
                (#"{"status": "wid", "wid": "\#(code)"}"#, 404), (#"{"status": "wid", "wid": "1234567"}"#, 404),
                (#"{"status": "abort", "wid": ""}"#, 404),
            ]
            for (body, status) in statusCases {
                let r = try await f.http.send("POST", "/rps/codeStatus", body: Data(body.utf8))
                XCTAssertEqual(r.status, status, body)
                XCTAssertNotNil(r.object?["message"]?.string, body)
            }
            for (method, path) in [("PUT", "/oidc/jwks"), ("POST", "/.well-known/openid-configuration"), ("GET", "/oidc/token"),
                                   ("GET", "/rps/codeStatus"), ("DELETE", "/authorize"), ("POST", "/service")] {
                let r = try await f.http.send(method, path)
                XCTAssertEqual(r.status, 405, "\(method) \(path)")
                XCTAssertNotNil(r.object, "\(method) \(path)")
            }
        } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }

    /// Registration codes (docs/MFA.md §8) and the MFA members of a registration: malformed input is
    /// a 4xx with a JSON message, never a 5xx; a refused code stores nothing.
    func testRegistrationCodeBadInput() async throws {
        let f = try await fixture()
        do {
            for body in ["not json", "{}", #"{"mpinResponse": {}}"#, #"{"mpinResponse": {"authOTT": 5}}"#,
                         #"{"mpinResponse": {"authOTT": "zz"}}"#, #"{"mpinResponse": {"authOTT": ""}}"#] {
                let r = try await f.http.send("POST", "/rps/regCode", body: Data(body.utf8))
                XCTAssertTrue((400..<500).contains(r.status), "\(body): \(r.status)")
                XCTAssertNotNil(r.object?["message"]?.string, body)
            }
            let unknown = try await f.http.post("/rps/regCode", AuthenticateRequest(mpinResponse: MPinResponse(
                authOTT: String(repeating: "a", count: 32))))
            XCTAssertEqual(unknown.status, 408, "an authOTT the server never issued")
            let cases: [(String, Int)] = [
                (#"{"userId": "bob@example.com", "regCode": "12345"}"#, 403),
                (#"{"userId": "bob@example.com", "regCode": "abcdefabcdef"}"#, 403),
                (#"{"userId": "bob@example.com", "regCode": "000000000000"}"#, 403),
                (#"{"userId": "bob@example.com", "regCode": 5}"#, 400),
                (#"{"userId": "bob@example.com", "wid": "1234567"}"#, 404),
                (#"{"userId": "bob@example.com", "wid": "\#(String(repeating: "c", count: 32))"}"#, 404),
            ]
            for (body, status) in cases {
                let r = try await f.http.send("PUT", "/rps/user", body: Data(body.utf8))
                XCTAssertEqual(r.status, status, body)
                XCTAssertNotNil(r.object?["message"]?.string, body)
            }
            let users = try await f.server.admin().list()
            XCTAssertFalse(users.contains { $0.userId == "bob@example.com" }, "refused registrations store nothing")
        } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }

    /// The signing key: one file, owner-only, the same key across restarts.
    func testSigningKeyFileIsPrivateAndStable() async throws {
        let f = try await fixture()
        do {
            let path = f.server.dataDir + "/oidc-es256.pem"
            let attrs = try FileManager.default.attributesOfItem(atPath: path)
            XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
            let first = try await f.http.get("/oidc/jwks").object?["keys"]
            await f.server.stop()
            try await f.server.start()
            let awaited18 = try await f.server.client.get("/oidc/jwks").object?["keys"]
            XCTAssertEqual(awaited18, first)
        } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }
}
