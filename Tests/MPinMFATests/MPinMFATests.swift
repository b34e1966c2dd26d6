import Foundation
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinServer
import MPinTestSupport
import XCTest

/// Every method of the seeds' `MPinMFA` section against mpin-server over real HTTP on
/// 127.0.0.1 (docs/MFA.md), through the Linux platform (libcurl, file store).
final class MPinMFATests: XCTestCase {
    private var server: MFAServer!

    override func setUp() async throws { server = try await MFAServer() }
    override func tearDown() async throws { await server?.stop() }

    // MARK: Service, backend, users

    func testServiceDetailsWorkBeforeABackendIsSet() async {
        let server = self.server!
        let r = await blocking { () -> (MPinStatus, MPinServiceDetails, MPinStatus, MPinStatus, [MPinStatus.Code]) in
            let mfa = MPinMFA(context: server.platform)
            // Before initialize and before a backend: GetServiceDetails is what finds the backend.
            let (status, details) = mfa.getServiceDetails(url: server.backend + "/")
            let initialised = mfa.initialize()
            let noBackend = mfa.getSessionDetails(accessCode: String(repeating: "0", count: 32)).status
            let set = [mfa.testBackend(details.backendURL, rpsPrefix: details.rpsPrefix).code,
                       mfa.setBackend(details.backendURL, rpsPrefix: details.rpsPrefix).code,
                       mfa.testBackend(server.backend, rpsPrefix: "nope").code,
                       mfa.getServiceDetails(url: server.backend + "/nothing-here").status.code]
            return (status, details, initialised, noBackend, set)
        }
        XCTAssertEqual(r.0.code, .ok)
        XCTAssertEqual([r.1.name, r.1.backendURL, r.1.rpsPrefix, r.1.logoURL], ["mpin-server", server.backend, "rps", ""])
        XCTAssertEqual(r.2.code, .ok)
        XCTAssertEqual(r.3.code, .flowError, "session details need a backend")
        XCTAssertEqual(r.4, [.ok, .ok, .httpRequestError, .httpRequestError])
    }

    func testUsersAreScopedByCustomerAndPersisted() async {
        let server = self.server!
        let r = await blocking { () -> [String] in
            let mfa = server.sdk()
            var out: [String] = []
            XCTAssertEqual(mfa.listUsers().count, 0)
            let (user, codes) = server.registered(mfa, "alice@example.org")
            out.append(codes.map(\.rawValue).joined(separator: ","))
            out.append("\(mfa.isUserExisting("alice@example.org", customerId: server.customerId, appId: ""))")
            out.append("\(mfa.isUserExisting("alice@example.org", customerId: "another-customer", appId: ""))")
            out.append("\(mfa.isUserExisting("alice@example.org", customerId: server.customerId, appId: "some-app"))")
            out.append("\(mfa.isUserExisting("bob@example.org", customerId: server.customerId, appId: ""))")
            // The same identity for the same customer cannot register twice.
            let p = try! MFAServer.pkce()
            let code = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).accessCode
            out.append(mfa.startRegistration(mfa.makeNewUser(id: "alice@example.org"), accessCode: code).code.rawValue)
            out.append(user.state.rawValue)

            // A second instance over the same store sees the user with its customer.
            let again = server.sdk(backend: false)
            let listed = again.listUsers()
            out.append(listed.map { "\($0.id)|\($0.backend)|\($0.customerId)|\($0.appId)|\($0.state.rawValue)" }.joined())
            // The Milagro facade shares the store.
            let milagro = MPinSDK(context: server.platform)
            _ = milagro.initialize(config: ["backend": server.backend])
            out.append(milagro.listUsers().1.map(\.id).joined())
            // DeleteUser forgets it, in the store too.
            if let first = listed.first { out.append(again.deleteUser(first).code.rawValue) }
            out.append("\(again.isUserExisting("alice@example.org", customerId: server.customerId, appId: ""))")
            out.append("\(server.sdk(backend: false).listUsers().count)")
            return out
        }
        let key = String(server.backend.dropFirst("http://".count))
        XCTAssertEqual(r, ["OK,OK,OK,OK", "true", "false", "false", "false", "FLOW_ERROR", "REGISTERED",
                           "alice@example.org|\(key)|\(server.customerId)||REGISTERED", "alice@example.org",
                           "OK", "false", "0"])
    }

    /// A store written before the MFA fields existed (a Milagro user) still loads.
    func testAStoreWithoutCustomerFieldsLoads() async {
        let server = self.server!
        let r = await blocking { () -> [String] in
            let milagro = MPinSDK(context: server.platform)
            _ = milagro.initialize(config: ["backend": server.backend])
            let user = milagro.makeNewUser(id: "old@example.org")
            let codes = [milagro.startRegistration(user), milagro.confirmRegistration(user),
                         milagro.finishRegistration(user, pin: secret("1111"))].map(\.code.rawValue)
            let stored = (try? server.platform.nonSecureStorage.read("users")).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
            let mfa = server.sdk()
            let users = mfa.listUsers()
            var out = codes + ["\(stored.contains("customerId"))"]
            out += users.map { "\($0.id)|\($0.customerId)|\($0.state.rawValue)" }
            // The MFA facade authenticates it (an OTP: no customer session needed).
            if let u = users.first {
                out.append(mfa.startAuthenticationOTP(u).code.rawValue)
                out.append(mfa.finishAuthenticationOTP(u, pin0: secret("1111")).otp.status.code.rawValue)
            }
            return out
        }
        XCTAssertEqual(r, ["OK", "OK", "OK", "false", "old@example.org||REGISTERED", "OK", "OK"])
    }

    // MARK: Headers and domains

    func testClientIdAndCustomHeadersAreSent() async {
        let server = self.server!
        let r = await blocking { () -> ([MPinStatus.Code], [HTTPRequest], Int) in
            let recorder = RecordingTransport(base: server.platform.transport)
            let context = TestContext(transport: recorder, secureStorage: server.platform.secureStorage,
                                      nonSecureStorage: server.platform.nonSecureStorage)
            let mfa = MPinMFA(context: context)
            var codes = [mfa.initialize(config: ["backend": server.backend], customHeaders: ["X-Init": "1"]).code]
            let p = try! MFAServer.pkce()
            // The platform refuses an authorization whose client id header names another app.
            mfa.setClientId("cid-00000000000000000000000000000000")
            codes.append(mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).status.code)
            mfa.setClientId(server.app.clientId)
            mfa.addCustomHeaders(["X-Added": "2"])
            codes.append(mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).status.code)
            let marked = recorder.sent.count
            mfa.clearCustomHeaders()
            codes.append(mfa.testBackend(server.backend).code)
            return (codes, recorder.sent, marked)
        }
        XCTAssertEqual(r.0, [.ok, .httpRequestError, .ok, .ok])
        XCTAssertEqual(r.1.first?.headers["X-Init"], "1", "initSDKWithHeaders")
        XCTAssertNil(r.1.first?.headers["X-MIRACL-Client-ID"], "no client id before SetClientId")
        for request in r.1.dropFirst() {
            XCTAssertNotNil(request.headers["X-MIRACL-Client-ID"], request.url)
        }
        XCTAssertEqual(r.1[r.2 - 1].headers["X-MIRACL-Client-ID"], server.app.clientId)
        XCTAssertEqual(r.1[r.2 - 1].headers["X-Added"], "2")
        XCTAssertNil(r.1.last?.headers["X-Added"], "ClearCustomHeaders")
        XCTAssertNil(r.1.last?.headers["X-Init"], "ClearCustomHeaders")
        XCTAssertEqual(r.1.last?.headers["X-MIRACL-Client-ID"], server.app.clientId, "the client id survives ClearCustomHeaders")
    }

    func testTrustedDomains() async {
        let server = self.server!
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = server.sdk(backend: false)
            mfa.addTrustedDomain("example.com")
            let refused = [mfa.getServiceDetails(url: server.backend).status.code, mfa.setBackend(server.backend).code]
            mfa.clearTrustedDomains()
            return refused + [mfa.getServiceDetails(url: server.backend).status.code, mfa.setBackend(server.backend).code]
        }
        XCTAssertEqual(r, [.untrustedDomainError, .untrustedDomainError, .ok, .ok])
    }

    // MARK: Logging in

    /// A mobile app's own login: GetAccessCode → StartAuthentication → FinishAuthentication
    /// with authzCode → the app's backend redeems the code once at /oidc/token.
    func testAppLoginWithAuthorizationCode() async throws {
        let server = self.server!
        let p = try MFAServer.pkce()
        let r = await blocking { () -> ([MPinStatus.Code], MPinSessionDetails, String, [MPinStatus.Code]) in
            let mfa = server.sdk()
            mfa.setClientId(server.app.clientId)
            let (user, reg) = server.registered(mfa, "alice@example.org")
            let (s, accessCode) = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge))
            let (d, details) = mfa.getSessionDetails(accessCode: accessCode)
            let start = mfa.startAuthentication(user, accessCode: accessCode)
            let (finish, authzCode) = mfa.finishAuthenticationAuthzCode(user, pin0: secret("1234"), pin1: SecretBytes(),
                                                                       accessCode: accessCode)
            // The access code is used up by the login.
            let reused = [mfa.startAuthentication(user, accessCode: accessCode).code,
                          mfa.finishAuthentication(user, pin0: secret("1234"), pin1: SecretBytes(), accessCode: accessCode).code,
                          mfa.getSessionDetails(accessCode: accessCode).status.code,
                          mfa.abortSession(accessCode: accessCode).code]
            return (reg + [s.code, d.code, start.code, finish.code], details, authzCode, reused)
        }
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .ok, .ok, .ok, .ok, .ok])
        XCTAssertEqual([r.1.prerollId, r.1.appName, r.1.appIconURL, r.1.customerId, r.1.customerName, r.1.customerIconURL],
                       ["", "Wiki", "https://wiki.example/logo.png", server.customerId, "mpin-server", ""])
        XCTAssertEqual(r.2.count, 43, "an authorization code")
        XCTAssertEqual(r.3, [.ok, .incorrectAccessNumber, .incorrectAccessNumber, .incorrectAccessNumber])

        let first = server.redeem(code: r.2, verifier: p.verifier)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.idToken.split(separator: ".").count, 3, "an ID token")
        let second = server.redeem(code: r.2, verifier: p.verifier)
        XCTAssertEqual(second.status, 400, "an authorization code is redeemed once")
        XCTAssertEqual(second.error, "invalid_grant")
    }

    /// A web login: the browser's page holds the session; the device scans the access code,
    /// authenticates with FinishAuthentication, and the browser's poll gets the redirect.
    func testBrowserLogin() async throws {
        let server = self.server!
        let p = try MFAServer.pkce()
        let (accessCode, webOTT) = server.browserSession(challenge: p.challenge)
        XCTAssertEqual(accessCode.count, 32)
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = server.sdk()
            let (user, reg) = server.registered(mfa, "web@example.org")
            return reg + [mfa.getSessionDetails(accessCode: accessCode).status.code,
                          mfa.startAuthentication(user, accessCode: accessCode).code,
                          mfa.finishAuthentication(user, pin0: secret("1234"), pin1: SecretBytes(), accessCode: accessCode).code]
        }
        XCTAssertEqual(r, [.ok, .ok, .ok, .ok, .ok, .ok, .ok])
        let (status, poll) = server.send(.post, "/authorize/status", #"{"webOTT": "\#(webOTT)"}"#)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(poll["status"]?.stringValue, "authenticated")
        let redirect = poll["redirectURL"]?.stringValue ?? ""
        XCTAssertTrue(redirect.hasPrefix(MFAServer.redirectURI + "?code="), redirect)
        let code = redirect.split(separator: "=")[1].split(separator: "&")[0]
        XCTAssertEqual(server.redeem(code: String(code), verifier: p.verifier).status, 200)
    }

    func testAbortedSession() async throws {
        let server = self.server!
        let p = try MFAServer.pkce()
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = server.sdk()
            let (user, reg) = server.registered(mfa, "abort@example.org")
            let accessCode = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).accessCode
            return reg + [mfa.getSessionDetails(accessCode: accessCode).status.code,
                          mfa.abortSession(accessCode: accessCode).code,
                          mfa.getSessionDetails(accessCode: accessCode).status.code,
                          mfa.abortSession(accessCode: accessCode).code,
                          mfa.startAuthentication(user, accessCode: accessCode).code,
                          mfa.finishAuthentication(user, pin0: secret("1234"), pin1: SecretBytes(), accessCode: accessCode).code,
                          mfa.abortSession(accessCode: "not-a-code").code]
        }
        XCTAssertEqual(r, [.ok, .ok, .ok, .ok, .ok, .ok, .incorrectAccessNumber, .incorrectAccessNumber, .ok,
                           .incorrectAccessNumber, .incorrectAccessNumber])
    }

    func testOTP() async {
        let server = self.server!
        let r = await blocking { () -> ([MPinStatus.Code], MPinOTP) in
            let mfa = server.sdk()
            let (user, reg) = server.registered(mfa, "otp@example.org", pin1: "token-42")
            let start = mfa.startAuthenticationOTP(user).code
            let (status, otp) = mfa.finishAuthenticationOTP(user, pin0: secret("1234"), pin1: secret("token-42"))
            return (reg + [start, status.code], otp)
        }
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .ok, .ok, .ok])
        XCTAssertEqual(r.1.status.code, .ok)
        XCTAssertEqual(r.1.otp.count, 6)
        XCTAssertTrue(r.1.otp.allSatisfy(\.isNumber))
        XCTAssertGreaterThan(r.1.ttlSeconds, 0)
        XCTAssertEqual(r.1.expireTime - r.1.nowTime, Int64(r.1.ttlSeconds))
    }

    // MARK: The second factor

    /// pin1 is a factor: a right pin0 with a wrong (or missing) pin1 is INCORRECT_PIN, counted
    /// toward blocking like a wrong PIN; three in a row block the user.
    func testWrongPin1WithRightPin0() async throws {
        let server = self.server!
        let r = await blocking { () -> ([MPinStatus.Code], MPinUserState, MPinStatus.Code) in
            let mfa = server.sdk()
            let (user, reg) = server.registered(mfa, "two@example.org", pin1: "nfc-7f3a")
            var out = reg
            func login(_ pin0: String, _ pin1: String) {
                let p = try! MFAServer.pkce()
                let code = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).accessCode
                out.append(mfa.startAuthentication(user, accessCode: code).code)
                out.append(mfa.finishAuthentication(user, pin0: secret(pin0), pin1: secret(pin1), accessCode: code).code)
            }
            login("1234", "nfc-7f3a")   // both right
            login("1234", "nfc-7f3b")   // wrong pin1
            login("1234", "")           // pin1 missing
            login("1234", "nfc-7f3a")   // right again: the counter starts over
            login("1234", "nfc-0000")
            login("9999", "nfc-7f3a")   // wrong pin0, right pin1
            login("1234", "nfc-1111")   // third failure in a row: blocked
            let after = mfa.startAuthentication(user, accessCode: "0").code
            return (out, user.state, after)
        }
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .ok, .ok, .ok, .ok, .incorrectPIN, .ok, .incorrectPIN, .ok, .ok,
                             .ok, .incorrectPIN, .ok, .incorrectPIN, .ok, .incorrectPIN])
        XCTAssertEqual(r.1, .blocked)
        XCTAssertEqual(r.2, .flowError, "a blocked user cannot start")
    }

    // MARK: Flow errors

    func testFlowErrorsInTheWrongUserState() async throws {
        let server = self.server!
        let r = await blocking { () -> [MPinStatus.Code] in
            var out: [MPinStatus.Code] = []
            let bare = server.sdk(backend: false)
            let early = bare.makeNewUser(id: "early@example.org")
            out.append(bare.startRegistration(early, accessCode: "", pmi: "").code)           // no backend
            let mfa = server.sdk()
            let stranger = mfa.makeNewUser(id: "stranger@example.org")
            out.append(mfa.startAuthentication(stranger, accessCode: "").code)                // not in the list
            out.append(mfa.confirmRegistration(stranger).code)
            out.append(mfa.finishRegistration(stranger, pin0: secret("1"), pin1: SecretBytes()).code)
            out.append(mfa.restartRegistration(stranger).code)
            out.append(mfa.startAuthenticationOTP(stranger).code)
            out.append(mfa.startAuthenticationRegCode(stranger).code)
            let (user, reg) = server.registered(mfa, "flow@example.org")
            out += reg
            out.append(mfa.startRegistration(user, accessCode: "").code)                     // already registered
            out.append(mfa.restartRegistration(user).code)
            out.append(mfa.confirmRegistration(user).code)
            out.append(mfa.finishRegistration(user, pin0: secret("1"), pin1: SecretBytes()).code)
            // Finishing without starting: no time permit.
            out.append(mfa.finishAuthenticationOTP(user, pin0: secret("1234")).status.code)
            out.append(mfa.finishAuthenticationRegCode(user, pin0: secret("1234"), pin1: SecretBytes()).status.code)
            out.append(mfa.startAuthenticationOTP(user).code)
            out.append(mfa.finishAuthentication(user, pin0: secret("1234"), pin1: SecretBytes(), accessCode: "").code)
            out.append(mfa.finishAuthentication(user, pin0: SecretBytes(), pin1: SecretBytes(), accessCode: "x").code)
            out.append(mfa.deleteUser(user).code)
            out.append(mfa.startAuthentication(user, accessCode: "").code)                   // deleted
            out.append(mfa.deleteUser(user).code)
            return out
        }
        XCTAssertEqual(r, [.flowError, .flowError, .flowError, .flowError, .flowError, .flowError, .flowError,
                           .ok, .ok, .ok, .ok,
                           .flowError, .flowError, .flowError, .flowError, .flowError, .flowError,
                           .ok, .flowError, .pinInputCanceled, .ok, .flowError, .flowError])
        _ = server
    }
}

/// The flows that need a server of their own: identity verification by code (so that a
/// registration stays STARTED_REGISTRATION) and access codes that live one second.
final class MPinMFAVerificationTests: XCTestCase {
    func testRestartRegistrationAndExpiredAccessCodes() async throws {
        let server = try await MFAServer(autoActivate: false) { config in
            var mfa = MFASettings()
            mfa.accessCodeTTLSeconds = 1
            config.mfaSettings = mfa
        }
        let p = try MFAServer.pkce()
        let r = await blocking { () -> ([MPinStatus.Code], MPinUserState) in
            let mfa = MPinMFA(context: server.platform)
            var out = [mfa.initialize(config: ["backend": server.backend]).code]
            let (s, code) = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge))
            let user = mfa.makeNewUser(id: "pending@example.org")
            out += [s.code, mfa.startRegistration(user, accessCode: code, pmi: "push-token-1").code]
            out.append(mfa.confirmRegistration(user).code)                  // not verified yet
            out.append(mfa.restartRegistration(user).code)
            out.append(mfa.finishRegistration(user, pin0: secret("1234"), pin1: SecretBytes()).code)
            let state = user.state
            // An access code that has outlived its second.
            let (_, late) = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge))
            Thread.sleep(forTimeInterval: 2.2)
            out.append(mfa.getSessionDetails(accessCode: late).status.code)
            out.append(mfa.abortSession(accessCode: late).code)
            return (out, state)
        }
        await server.stop()
        XCTAssertEqual(r.0, [.ok, .ok, .ok, .identityNotVerified, .ok, .flowError, .incorrectAccessNumber, .incorrectAccessNumber])
        XCTAssertEqual(r.1, .startedRegistration)
    }

    /// An expired access code at the final step (the login itself) is INCORRECT_ACCESS_NUMBER.
    func testExpiredAccessCodeAtLogin() async throws {
        let server = try await MFAServer { config in
            var mfa = MFASettings()
            mfa.accessCodeTTLSeconds = 1
            config.mfaSettings = mfa
        }
        let p = try MFAServer.pkce()
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = MPinMFA(context: server.platform)
            var out = [mfa.initialize(config: ["backend": server.backend]).code]
            let user = mfa.makeNewUser(id: "late@example.org")
            let reg = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).accessCode
            out += [mfa.startRegistration(user, accessCode: reg).code, mfa.confirmRegistration(user).code,
                    mfa.finishRegistration(user, pin0: secret("1234"), pin1: SecretBytes()).code]
            let code = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge)).accessCode
            out.append(mfa.startAuthentication(user, accessCode: code).code)
            Thread.sleep(forTimeInterval: 2.2)
            out.append(mfa.finishAuthentication(user, pin0: secret("1234"), pin1: SecretBytes(), accessCode: code).code)
            return out
        }
        await server.stop()
        XCTAssertEqual(r, [.ok, .ok, .ok, .ok, .ok, .incorrectAccessNumber])
    }
}
