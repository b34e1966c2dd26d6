import Foundation
import JWTKit
import MPinServer
import MPinWire
import XCTest

/// docs/MFA.md §12.1: what standard relying parties (and the OpenID Foundation's Basic OP tests)
/// expect of the provider beyond the code flow itself, and the login page a person sees.
extension OIDCFlowTests {
    /// The JOSE header of a compact JWS.
    static func header(_ jws: String) throws -> [String: JSONValue] {
        let part = try XCTUnwrap(jws.split(separator: ".").first.map(String.init))
        let bytes = try XCTUnwrap(base64URLDecode(part))
        guard case .object(let o) = try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
            throw RawHTTP.Failure(description: "header is not an object")
        }
        return o
    }

    /// Runs `body` with the fixture and always shuts the server down.
    func withFixture(adjust: (inout ServerConfig) -> Void = { _ in },
                     _ body: (Fixture) async throws -> Void) async throws {
        let f = try await fixture(adjust: adjust)
        do { try await body(f) } catch {
            await f.server.shutdown()
            throw error
        }
        await f.server.shutdown()
    }

    /// The same fixture with another application.
    func fixture(_ f: Fixture, app: NewAppCredentials) -> Fixture {
        Fixture(server: f.server, app: app, user: f.user)
    }

    // MARK: RS256 beside ES256

    /// Discovery announces RS256 and ES256, the JWKS publishes a key for each, a new
    /// application gets RS256 tokens (OIDC Core §15.1's default) and one registered with
    /// ES256 gets ES256; each verifies against the JWKS with jwt-kit and with jwcrypto, and
    /// only with its own algorithm.
    func testIDTokensAreSignedWithTheApplicationsAlgorithm() async throws {
        try await withFixture { f in
            let fetched = try await f.http.get("/.well-known/openid-configuration").object
            let discovery = try XCTUnwrap(fetched)
            XCTAssertEqual(discovery["id_token_signing_alg_values_supported"], .array([.string("RS256"), .string("ES256")]))
            guard case .array(let keys)? = try await f.http.get("/oidc/jwks").object?["keys"] else { return XCTFail("no keys") }
            var byAlg: [String: [String: JSONValue]] = [:]
            for case .object(let k) in keys { byAlg[k["alg"]?.string ?? ""] = k }
            XCTAssertEqual(byAlg["RS256"]?["kty"]?.string, "RSA")
            XCTAssertEqual(Self.base64URLDecode(byAlg["RS256"]?["n"]?.string ?? "")?.count, 256, "a 2048-bit modulus")
            XCTAssertEqual(byAlg["RS256"]?["e"]?.string, "AQAB")
            XCTAssertEqual(byAlg["ES256"]?["kty"]?.string, "EC")
            XCTAssertEqual(byAlg["ES256"]?["crv"]?.string, "P-256")
            XCTAssertNotEqual(byAlg["RS256"]?["kid"], byAlg["ES256"]?["kid"])

            let jwks = try await JWTKeyCollection().add(jwksJSON: String(decoding: try await f.http.get("/oidc/jwks").body, as: UTF8.self))
            let es = try await f.server.appAdmin().add(name: "Legacy", redirectURI: Self.redirectURI, idTokenAlg: "ES256")
            for (app, alg) in [(f.app, "RS256"), (es, "ES256")] {
                let g = fixture(f, app: app)
                let (code, verifier) = try await authorizationCode(g)
                let t = try await token(g, code: code, verifier: verifier)
                XCTAssertEqual(t.status, 200, String(decoding: t.body, as: UTF8.self))
                let idToken = try XCTUnwrap(t.object?["id_token"]?.string)
                let header = try Self.header(idToken)
                XCTAssertEqual(header["alg"]?.string, alg)
                XCTAssertEqual(header["kid"], byAlg[alg]?["kid"])
                let claims = try await jwks.verify(idToken, as: Claims.self)
                XCTAssertEqual(claims.aud, app.clientId)
                let ok = try Self.pythonVerify(idToken, issuer: f.base, clientID: app.clientId, nonce: "n-0S6", alg: alg)
                XCTAssertEqual(ok.status, 0, ok.stderr)
                let other = alg == "RS256" ? "ES256" : "RS256"
                let wrong = try Self.pythonVerify(idToken, issuer: f.base, clientID: app.clientId, nonce: "n-0S6", alg: other)
                XCTAssertEqual(wrong.status, 1, "a \(alg) token must not pass as \(other)")
            }
            // Another RSA key with the published kid does not verify.
            let stranger = JWTKeyCollection()
            let rsa = try Insecure.RSA.PrivateKey(pem: try Self.rsaKeyPEM())
            await stranger.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: byAlg["RS256"]?["kid"]?.string ?? ""))
            let now = Int(Date().timeIntervalSince1970)
            let forged = try await stranger.sign(Claims(iss: f.base, sub: "alice@example.com", aud: f.app.clientId, exp: now + 60,
                                                        iat: now, auth_time: now, nonce: nil, email: nil, amr: ["mpin"]))
            do {
                _ = try await jwks.verify(forged, as: Claims.self)
                XCTFail("a token of another RSA key verified")
            } catch {}

            // The key file sits beside oidc-es256.pem, owner-only.
            let attrs = try FileManager.default.attributesOfItem(atPath: f.server.dataDir + "/oidc-rs256.pem")
            XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
            // An algorithm outside the two is refused at registration.
            do {
                _ = try await f.server.appAdmin().add(name: "None", redirectURI: Self.redirectURI, idTokenAlg: "none")
                XCTFail("alg none was accepted")
            } catch let e as AppError { XCTAssertEqual(e, .invalidIDTokenAlg) }
        }
    }

    /// A fresh RSA key for the forgery above, from openssl (not the server's code).
    static func rsaKeyPEM() throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: The issuer follows the scheme served

    /// With TLS on and no publicBaseURL, discovery names https URLs (Discovery §4.3: the issuer
    /// is the URL the document was fetched from); publicBaseURL still wins when set.
    func testIssuerFollowsTheSchemeServed() async throws {
        let dir = NSTemporaryDirectory() + "mpin-oidc-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let made = try SelfSignedCertificate.make(host: "127.0.0.1")
        FileManager.default.createFile(atPath: dir + "/c.pem", contents: Data(made.certificatePEM.utf8))
        FileManager.default.createFile(atPath: dir + "/k.pem", contents: Data(made.keyPEM.utf8), attributes: [.posixPermissions: 0o600])
        for publicBase in [nil, "https://login.example"] {
            let server = try await TestServer(storage: Self.storage) { config in
                config.tlsCertificate = dir + "/c.pem"
                config.tlsKey = dir + "/k.pem"
                config.publicBaseURL = publicBase
            }
            do {
                let running = try await MPinServer(dataDirectory: server.dataDir, host: "127.0.0.1", port: 0,
                                                   logger: TestServer.quietLogger).start()
                let text = try Self.httpsGet(port: running.port, path: "/.well-known/openid-configuration")
                await running.stop()
                let body = try XCTUnwrap(text.components(separatedBy: "\r\n\r\n").dropFirst().first, text)
                guard case .object(let d) = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)) else {
                    return XCTFail(body)
                }
                let expected = publicBase ?? "https://127.0.0.1:\(running.port)"
                XCTAssertEqual(d["issuer"]?.string, expected)
                XCTAssertEqual(d["token_endpoint"]?.string, expected + "/oidc/token")
                XCTAssertEqual(d["userinfo_endpoint"]?.string, expected + "/oidc/userinfo")
            } catch {
                await server.shutdown()
                throw error
            }
            await server.shutdown()
        }
    }

    /// One HTTPS GET through `openssl s_client` (any certificate): the raw response.
    static func httpsGet(port: Int, path: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = ["s_client", "-connect", "127.0.0.1:\(port)", "-quiet", "-ign_eof", "-verify_quiet"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8))
        let data = output.fileHandleForReading.readDataToEndOfFile()
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Token endpoint headers

    /// A failed client authentication is 401 with a Basic challenge (RFC 6749 §5.2), whichever
    /// method was used; a token response carries `Pragma: no-cache` beside `no-store` (§5.1).
    func testTokenEndpointChallengesAndNoCacheHeaders() async throws {
        try await withFixture { f in
            let a = try await authorizationCode(f)
            for basic in [true, false] {
                let r = try await token(f, code: a.code, verifier: a.verifier, secret: "not-the-secret", basic: basic)
                assertOAuthError(r, 401, "invalid_client")
                XCTAssertEqual(r.headers["www-authenticate"], #"Basic realm="mpin-server""#, "basic: \(basic)")
                XCTAssertEqual(r.headers["pragma"], "no-cache")
                XCTAssertFalse(String(decoding: r.body, as: UTF8.self).contains("not-the-secret"))
            }
            let look = "cid-" + String(f.app.clientId.dropFirst(4).reversed())
            let lookAlike = Data("\(look):\(f.app.clientSecret)".utf8).base64EncodedString()
            let r = try RawHTTP.send(f.base, "POST", "/oidc/token", body: Data(Self.form([
                "grant_type": "authorization_code", "code": a.code, "redirect_uri": Self.redirectURI, "code_verifier": a.verifier,
            ]).utf8), headers: ["Authorization": "Basic " + lookAlike, "Content-Type": "application/x-www-form-urlencoded"])
            assertOAuthError(r, 401, "invalid_client")
            XCTAssertNotNil(r.headers["www-authenticate"])

            let ok = try await token(f, code: a.code, verifier: a.verifier)
            XCTAssertEqual(ok.status, 200, String(decoding: ok.body, as: UTF8.self))
            XCTAssertEqual(ok.headers["cache-control"], "no-store")
            XCTAssertEqual(ok.headers["pragma"], "no-cache")
        }
    }

    // MARK: /authorize errors

    /// For a known client and its registered redirect URI, a browser's bad request goes back to
    /// the client with `error`, `error_description` and `state` (RFC 6749 §4.1.2.1), including
    /// `prompt=none` (`login_required`) and a request object (`request_not_supported`). Never
    /// to a URI that is not the registered one, nor for an unknown or look-alike client id.
    func testAuthorizeErrorsAreRedirectedToTheRegisteredClient() async throws {
        try await withFixture { f in
            let p = try Self.pkce()
            let id = f.app.clientId
            let good = Self.authorizeQuery(clientID: id, state: "s t&1", challenge: p.challenge)
            let cases: [(String, String)] = [
                (good.replacingOccurrences(of: "response_type=code", with: "response_type=token"), "unsupported_response_type"),
                (good.replacingOccurrences(of: "scope=openid%20email", with: "scope=email"), "invalid_scope"),
                (good + "&prompt=none", "login_required"),
                (good + "&prompt=none%20login", "invalid_request"),
                (good + "&request=eyJhbGciOiJub25lIn0.e30.", "request_not_supported"),
                (good + "&request_uri=https%3A%2F%2Fwiki.example%2Freq", "request_uri_not_supported"),
                (good.replacingOccurrences(of: "code_challenge_method=S256", with: "code_challenge_method=plain"), "invalid_request"),
                (good + "&response_mode=fragment", "invalid_request"),
            ]
            for (query, error) in cases {
                let r = try RawHTTP.send(f.base, "GET", "/authorize?" + query)
                XCTAssertEqual(r.status, 302, query)
                let location = try XCTUnwrap(r.headers["location"], query)
                let url = try XCTUnwrap(URLComponents(string: location))
                XCTAssertEqual(url.scheme! + "://" + url.host! + url.path, Self.redirectURI)
                let items = Dictionary(uniqueKeysWithValues: (url.queryItems ?? []).map { ($0.name, $0.value ?? "") })
                XCTAssertEqual(items["error"], error, query)
                XCTAssertFalse(items["error_description"]?.isEmpty ?? true)
                XCTAssertEqual(items["state"], "s t&1", "the state comes back as sent")
                XCTAssertNil(items["code"])
            }
            // prompt=login (or consent) is fine: every login here is interactive anyway.
            let login = try RawHTTP.send(f.base, "GET", "/authorize?" + good + "&prompt=login")
            XCTAssertEqual(login.status, 200)
            // Without state, none comes back.
            let noState = Self.authorizeQuery(clientID: id, state: "x", challenge: p.challenge).replacingOccurrences(of: "&state=x", with: "")
            XCTAssertFalse(noState.contains("state="))
            let stateless = try RawHTTP.send(f.base, "GET", "/authorize?" + noState + "&prompt=none")
            XCTAssertEqual(stateless.status, 302)
            XCTAssertEqual(stateless.headers["location"]?.contains("state="), false)

            // The attacker's side: an unregistered redirect URI, a look-alike or unknown client:
            // answered here, never redirected anywhere.
            let evil = [
                Self.authorizeQuery(clientID: id, redirectURI: "https://evil.example/cb", challenge: p.challenge) + "&prompt=none",
                Self.authorizeQuery(clientID: id, redirectURI: Self.redirectURI + ".evil.example", challenge: p.challenge) + "&request=x",
                Self.authorizeQuery(clientID: id + "0", challenge: p.challenge) + "&prompt=none",
                Self.authorizeQuery(clientID: id.uppercased(), challenge: p.challenge) + "&prompt=none",
                Self.authorizeQuery(clientID: String(id.dropLast()), challenge: p.challenge) + "&prompt=none",
                good.replacingOccurrences(of: "response_type=code", with: "response_type=token") + "&redirect_uri=https%3A%2F%2Fevil.example%2Fcb",
            ]
            for query in evil {
                let r = try RawHTTP.send(f.base, "GET", "/authorize?" + query)
                XCTAssertEqual(r.status, 400, query)
                XCTAssertNil(r.headers["location"], query)
                XCTAssertNotNil(r.object?["error"]?.string, query)
            }
            // The app (POST) still gets its 400 with the OAuth body.
            assertOAuthError(try await f.http.send("POST", "/authorize?" + good + "&prompt=none"), 400, "login_required")
            assertOAuthError(try await f.http.send("POST", "/authorize?" + good + "&request=x"), 400, "request_not_supported")
        }
    }

    /// OIDC Core §3.1.2.1: the authorization request may come as a browser's form POST; it is
    /// then a browser's (the page, or a redirect for an error), while the SDK's POST (JSON, the
    /// parameters in the query) still gets JSON.
    func testAuthorizeAcceptsABrowsersFormPost() async throws {
        try await withFixture { f in
            let p = try Self.pkce()
            let query = Self.authorizeQuery(clientID: f.app.clientId, challenge: p.challenge)
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let page = try RawHTTP.send(f.base, "POST", "/authorize", body: Data(query.utf8), headers: form)
            XCTAssertEqual(page.status, 200, String(decoding: page.body, as: UTF8.self))
            XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")
            let html = String(decoding: page.body, as: UTF8.self)
            XCTAssertNotNil(Self.shortCode(html))
            // Start again is the same request as a GET.
            let again = html.components(separatedBy: #"id="again-link" href=""#).dropFirst().first?.components(separatedBy: "\"").first
            XCTAssertEqual(again?.replacingOccurrences(of: "&amp;", with: "&"), "/authorize?" + query)
            let bad = try RawHTTP.send(f.base, "POST", "/authorize",
                                       body: Data((query + "&prompt=none").utf8), headers: form)
            XCTAssertEqual(bad.status, 302)
            XCTAssertTrue(bad.headers["location"]?.hasPrefix(Self.redirectURI + "?error=login_required&") ?? false)
            // Parameters in a form body are not mixed with the query's.
            let split = try RawHTTP.send(f.base, "POST", "/authorize?" + query, body: Data("x=1".utf8), headers: form)
            XCTAssertEqual(split.status, 400)
            XCTAssertNil(split.headers["location"])
            let app = try await f.http.send("POST", "/authorize?" + query, body: Data("{}".utf8))
            XCTAssertEqual(app.status, 200)
            XCTAssertNotNil(app.object?["webOTT"]?.string)
        }
    }

    /// `state` is optional (RFC 6749 §4.1.1) when PKCE protects the code: the redirect carries
    /// only the code, and the code redeems.
    func testStateIsOptionalWithPKCE() async throws {
        try await withFixture { f in
            let p = try Self.pkce()
            let query = Self.authorizeQuery(clientID: f.app.clientId, challenge: p.challenge).replacingOccurrences(of: "&state=st-1", with: "")
            let r = try await f.http.send("POST", "/authorize?" + query, body: Data("{}".utf8))
            XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
            let accessCode = try XCTUnwrap(r.object?["accessCode"]?.string)
            let auth = try await authenticate(f, accessCode: accessCode)
            XCTAssertEqual(auth.status, 200, String(decoding: auth.body, as: UTF8.self))
            let code = try XCTUnwrap(auth.object?["code"]?.string)
            XCTAssertEqual(auth.object?["redirectURL"]?.string, Self.redirectURI + "?code=" + code)
            let t = try await token(f, code: code, verifier: p.verifier)
            XCTAssertEqual(t.status, 200, String(decoding: t.body, as: UTF8.self))
        }
    }

    // MARK: CORS on the page's poll

    /// `/authorize/status` is the page's own (same origin): no `Access-Control-Allow-Origin: *`
    /// with `Access-Control-Allow-Credentials: true`, on the answer or the preflight.
    func testStatusPollHasNoWildcardCredentialedCORS() async throws {
        try await withFixture { f in
            let p = try Self.pkce()
            let (_, webOTT) = try await startSession(f, challenge: p.challenge)
            let body = Data(#"{"webOTT": "\#(webOTT)"}"#.utf8)
            let poll = try RawHTTP.send(f.base, "POST", "/authorize/status", body: body,
                                        headers: ["Origin": "https://evil.example", "Content-Type": "application/json"])
            XCTAssertEqual(poll.status, 200)
            let preflight = try RawHTTP.send(f.base, "OPTIONS", "/authorize/status",
                                             headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"])
            for r in [poll, preflight] {
                XCTAssertNil(r.headers["access-control-allow-origin"])
                XCTAssertNil(r.headers["access-control-allow-credentials"])
            }
        }
    }

    // MARK: UserInfo

    /// `/oidc/userinfo` answers `sub` and `email` for the access token of the code flow (GET
    /// and POST); no token, an unknown or expired one is 401 with a Bearer challenge.
    func testUserinfoAnswersForTheAccessToken() async throws {
        try await withFixture(adjust: { $0.mfaSettings = { var s = MFASettings(); s.idTokenTTLSeconds = 2; return s }() }) { f in
            let discovery = try await f.http.get("/.well-known/openid-configuration").object
            XCTAssertEqual(discovery?["userinfo_endpoint"]?.string, f.base + "/oidc/userinfo")
            let (code, verifier) = try await authorizationCode(f)
            let t = try await token(f, code: code, verifier: verifier)
            let access = try XCTUnwrap(t.object?["access_token"]?.string)
            for method in ["GET", "POST"] {
                let r = try RawHTTP.send(f.base, method, "/oidc/userinfo", headers: ["Authorization": "Bearer " + access])
                XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
                XCTAssertEqual(r.object?["sub"]?.string, "alice@example.com")
                XCTAssertEqual(r.object?["email"]?.string, "alice@example.com")
                XCTAssertEqual(r.headers["cache-control"], "no-store")
            }
            let none = try RawHTTP.send(f.base, "GET", "/oidc/userinfo")
            XCTAssertEqual(none.status, 401)
            XCTAssertEqual(none.headers["www-authenticate"], #"Bearer realm="mpin-server""#)
            var other = Array(access)
            other[5] = other[5] == "A" ? "B" : "A"
            for token in [String(other), access + "x", "Basic " + access] {
                let r = try RawHTTP.send(f.base, "GET", "/oidc/userinfo", headers: ["Authorization": "Bearer " + token])
                XCTAssertEqual(r.status, 401, token)
                XCTAssertEqual(r.headers["www-authenticate"], #"Bearer realm="mpin-server", error="invalid_token""#)
                XCTAssertFalse(String(decoding: r.body, as: UTF8.self).contains(access), "the token is never echoed")
            }
            try await Task.sleep(nanoseconds: 2_300_000_000)
            let expired = try RawHTTP.send(f.base, "GET", "/oidc/userinfo", headers: ["Authorization": "Bearer " + access])
            XCTAssertEqual(expired.status, 401)
        }
    }

    // MARK: The login page

    /// The page a person sees: the application's name (escaped), a QR code of the short code as
    /// inline SVG, the short code (7 digits with a valid check digit), the time left and the
    /// waiting state; a strict CSP whose nonce is the one on the inline script and style, and
    /// nothing loaded from elsewhere.
    func testLoginPageShowsTheApplicationQRCodeShortCodeAndTimeLeft() async throws {
        try await withFixture { f in
            let odd = try await f.server.appAdmin().add(name: #"Wiki <b>"&'"#, redirectURI: Self.redirectURI)
            let p = try Self.pkce()
            let r = try RawHTTP.send(f.base, "GET", "/authorize?" + Self.authorizeQuery(clientID: odd.clientId, challenge: p.challenge))
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.headers["content-type"], "text/html; charset=utf-8")
            XCTAssertEqual(r.headers["cache-control"], "no-store")
            XCTAssertEqual(r.headers["x-content-type-options"], "nosniff")
            XCTAssertEqual(r.headers["referrer-policy"], "no-referrer")
            let html = String(decoding: r.body, as: UTF8.self)
            XCTAssertTrue(html.contains(#"<span id="app">Wiki &lt;b&gt;&quot;&amp;&#39;</span>"#), html)
            XCTAssertFalse(html.contains("<b>"))

            let csp = try XCTUnwrap(r.headers["content-security-policy"])
            XCTAssertTrue(csp.hasPrefix("default-src 'none'; "), csp)
            let nonce = try XCTUnwrap(csp.components(separatedBy: "script-src 'nonce-").dropFirst().first?.components(separatedBy: "'").first)
            XCTAssertGreaterThanOrEqual(nonce.count, 22)
            XCTAssertTrue(csp.contains("style-src 'nonce-\(nonce)'"))
            XCTAssertTrue(csp.contains("frame-ancestors 'none'"))
            XCTAssertFalse(csp.contains("unsafe-inline"))
            XCTAssertEqual(html.components(separatedBy: "<script").count - 1, 1)
            XCTAssertTrue(html.contains(#"<script nonce="\#(nonce)">"#))
            XCTAssertTrue(html.contains(#"<style nonce="\#(nonce)">"#))
            for external in ["src=", "<link", "@import", "url("] { XCTAssertFalse(html.contains(external), external) }
            XCTAssertFalse(html.contains(" on") && html.contains("onclick="), "no inline handlers")

            let code = try XCTUnwrap(Self.shortCode(html))
            XCTAssertTrue(AccessNumber.isValid(code), code)
            XCTAssertTrue(html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
            XCTAssertTrue(html.contains(QRCode(digits: code)!.svg(quiet: 4, title: "QR code of the login code \(code)")))
            XCTAssertTrue(html.contains("mpin approve \(code)"))
            XCTAssertTrue(html.contains(#"data-state="waiting""#))
            XCTAssertTrue(html.contains(#"<span id="left">5 min</span>"#), "the default 300 s")
            XCTAssertTrue(html.contains(#"viewport"#))
            // A second page gets another code and another nonce.
            let again = String(decoding: try RawHTTP.send(f.base, "GET", "/authorize?" + Self.authorizeQuery(
                clientID: odd.clientId, challenge: p.challenge)).body, as: UTF8.self)
            XCTAssertNotEqual(Self.shortCode(again), code)
            XCTAssertFalse(again.contains(nonce))
        }
    }

    /// The short code in a page: the digits of `id="code"` (shown as `123 4567`).
    static func shortCode(_ html: String) -> String? {
        guard let tail = html.components(separatedBy: #"<strong id="code" class="code">"#).dropFirst().first,
              let shown = tail.components(separatedBy: "</strong>").first else { return nil }
        return shown.filter { $0 != " " }
    }

    /// The short code stands for the page's session: the device sees what asks (the
    /// application and the browser's address), approves with it as with an access number
    /// (a wrong PIN counted and the session kept), and the browser is sent on with the code.
    /// It cannot be used for another session, and a device-mode access number is not one.
    func testShortCodeApprovesTheWebLogin() async throws {
        try await withFixture { f in
            let p = try Self.pkce()
            let page = try RawHTTP.send(f.base, "GET", "/authorize?" + Self.authorizeQuery(clientID: f.app.clientId, challenge: p.challenge))
            let html = String(decoding: page.body, as: UTF8.self)
            let code = try XCTUnwrap(Self.shortCode(html))
            let webOTT = try XCTUnwrap(html.components(separatedBy: "var webOTT = \"").dropFirst().first?.prefix(32)).description

            let details = try await f.http.get("/rps/accessnumber/" + code)
            XCTAssertEqual(details.status, 200)
            XCTAssertEqual(details.object?["description"]?.string, "web login to Wiki from browser 127.0.0.1")
            let session = try await codeStatus(f, ["status": "wid", "wid": code])
            XCTAssertEqual(session.object?["appName"]?.string, "Wiki")
            XCTAssertEqual(session.object?["loginDescription"]?.string, "web login to Wiki from browser 127.0.0.1")

            let wrong = try await authenticate(f, pin: "9999", accessCode: code)
            XCTAssertEqual(wrong.status, 401)
            let awaitedUser = try await f.server.user("alice@example.com")
            XCTAssertEqual(awaitedUser?.failedAttempts, 1, "the wrong PIN is counted")
            let pending = try await f.http.post("/authorize/status", ["webOTT": webOTT]).object?["status"]?.string
            XCTAssertEqual(pending, "pending")

            let ok = try await authenticate(f, accessCode: code)
            XCTAssertEqual(ok.status, 200, String(decoding: ok.body, as: UTF8.self))
            let authz = try XCTUnwrap(ok.object?["code"]?.string)
            let poll = try await f.http.post("/authorize/status", ["webOTT": webOTT]).object
            XCTAssertEqual(poll?["status"]?.string, "authenticated")
            XCTAssertEqual(poll?["redirectURL"]?.string, Self.redirectURI + "?code=" + authz + "&state=st-1")
            let t = try await token(f, code: authz, verifier: p.verifier)
            XCTAssertEqual(t.status, 200)
            // Used up: the same code approves nothing more.
            let again = try await authenticate(f, accessCode: code)
            XCTAssertEqual(again.status, 412)

            // A device-mode access number goes its own way.
            let device = try await f.http.post("/rps/getAccessNumber", ["description": "ssh to host"])
            let number = try XCTUnwrap(device.object?["accessNumber"]?.string)
            let notWeb = try await codeStatus(f, ["status": "wid", "wid": number])
            XCTAssertEqual(notWeb.status, 404)
        }
    }

    /// The page's states through its poll: refused (the device aborted by short code) and
    /// expired (404), each a state the script shows with a way to start again.
    func testRefusedAndExpiredWebLogins() async throws {
        try await withFixture(adjust: { $0.mfaSettings = { var s = MFASettings(); s.accessCodeTTLSeconds = 2; return s }() }) { f in
            let p = try Self.pkce()
            func page() throws -> (code: String, webOTT: String) {
                let html = String(decoding: try RawHTTP.send(f.base, "GET", "/authorize?" + Self.authorizeQuery(
                    clientID: f.app.clientId, challenge: p.challenge)).body, as: UTF8.self)
                XCTAssertTrue(html.contains(#"id="again-link" href="/authorize?response_type=code&amp;client_id="#), html)
                XCTAssertTrue(html.contains(#"show("refused""#) && html.contains(#"show("expired""#))
                let webOTT = html.components(separatedBy: "var webOTT = \"").dropFirst().first?.prefix(32) ?? ""
                return (Self.shortCode(html) ?? "", String(webOTT))
            }
            let refused = try page()
            let abort = try await codeStatus(f, ["status": "abort", "wid": refused.code])
            XCTAssertEqual(abort.status, 200)
            let state = try await f.http.post("/authorize/status", ["webOTT": refused.webOTT]).object?["status"]?.string
            XCTAssertEqual(state, "refused")
            let approveRefused = try await authenticate(f, accessCode: refused.code)
            XCTAssertEqual(approveRefused.status, 412)

            let expiring = try page()
            try await Task.sleep(nanoseconds: 2_300_000_000)
            let expired = try await f.http.post("/authorize/status", ["webOTT": expiring.webOTT])
            XCTAssertEqual(expired.status, 404)
            let late = try await f.http.get("/rps/accessnumber/" + expiring.code)
            XCTAssertEqual(late.status, 404)
        }
    }
}
