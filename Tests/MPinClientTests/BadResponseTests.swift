import Foundation
import MPinClient
import MPinCrypto
import MPinJSON
import MPinTestSupport
import XCTest

final class BadResponseTests: XCTestCase {
    static let settings = #"{"registerURL": "/rps/user", "signatureURL": "/rps/signature", "certivoxURL": "http://dta.test/", "timePermitsURL": "/rps/timePermit", "mpinAuthServerURL": "/rps", "authenticateURL": "/rps/authenticate", "mobileAuthenticateURL": "/rps/authenticate", "accessNumberDigits": 7, "cSum": 1, "accessNumberUseCheckSum": true, "appID": "00"}"#

    /// An SDK whose backend answers clientSettings normally and `other` for everything else.
    private func sdk(_ other: @escaping @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse) -> MPinSDK {
        let t = ScriptedTransport { (r) throws(HTTPTransportError) -> HTTPResponse in
            if r.url.hasSuffix("/clientSettings") { return HTTPResponse(status: 200, body: Array(Self.settings.utf8)) }
            return try other(r)
        }
        let s = MPinSDK(context: TestContext(transport: t, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(s.initialize(config: ["backend": "http://rps.test"]).code, .ok)
        return s
    }

    private func registrationStatus(_ status: Int, _ body: String = "") -> MPinStatus.Code {
        let s = sdk { _ in HTTPResponse(status: status, body: Array(body.utf8)) }
        return s.startRegistration(s.makeNewUser(id: "alice")).code
    }

    func testHTTPStatusMapping() {
        XCTAssertEqual(registrationStatus(403), .identityNotAuthorized)
        XCTAssertEqual(registrationStatus(400), .httpRequestError)
        XCTAssertEqual(registrationStatus(404), .httpRequestError)
        XCTAssertEqual(registrationStatus(406), .badUserAgent)
        XCTAssertEqual(registrationStatus(500), .httpServerError)
        XCTAssertEqual(registrationStatus(503), .httpServerError)
        XCTAssertEqual(registrationStatus(302), .networkError)
        XCTAssertEqual(registrationStatus(204), .httpServerError, "2xx other than 200 is an error")
    }

    func testMalformedBodies() {
        XCTAssertEqual(registrationStatus(200, "not json"), .responseParseError)
        XCTAssertEqual(registrationStatus(200, "[1, 2]"), .responseParseError, "a 200 body must be an object")
        XCTAssertEqual(registrationStatus(200, "{\"mpinId\": 5, \"regOTT\": true}"), .responseParseError)
        XCTAssertEqual(registrationStatus(200, "{\"mpinId\": \"zz\", \"regOTT\": \"00\"}"), .responseParseError)
        XCTAssertEqual(registrationStatus(200, "{}"), .responseParseError)
        // A well-formed object nested 100,000 deep: refused for its depth alone.
        let deep = String(repeating: "{\"a\": ", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        XCTAssertEqual(registrationStatus(200, deep), .responseParseError, "deep nesting")
        let huge = "{\"a\": \"" + String(repeating: "x", count: 2 << 20) + "\"}"
        XCTAssertEqual(registrationStatus(200, huge), .responseParseError, "bodies over the parser's limit")
    }

    func testMessagesNameNeitherUserInformationNorQuery() {
        // A backend URL carrying credentials, and an answer the SDK reports with its URL.
        let t = ScriptedTransport { (r) throws(HTTPTransportError) -> HTTPResponse in
            if r.url.hasSuffix("/clientSettings") { return HTTPResponse(status: 200, body: Array(Self.settings.utf8)) }
            return HTTPResponse(status: 500, body: [])
        }
        let s = MPinSDK(context: TestContext(transport: t, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(s.initialize(config: ["backend": "http://admin:hunter2@rps.test"]).code, .ok)
        let status = s.startRegistration(s.makeNewUser(id: "alice"))
        XCTAssertEqual(status.code, .httpServerError)
        XCTAssertTrue(status.message.contains("rps.test"), status.message)
        XCTAssertFalse(status.message.contains("hunter2"), status.message)
        XCTAssertFalse(status.message.contains("admin"), status.message)
    }

    func testTransportFailures() {
        for error in [HTTPTransportError.connectionRefused(host: "rps.test"), .timedOut(host: "rps.test", seconds: 1),
                      .tlsFailure(host: "rps.test", detail: "bad certificate"), .hostNotFound(host: "rps.test")] {
            let s = sdk { (_) throws(HTTPTransportError) -> HTTPResponse in throw error }
            let status = s.startRegistration(s.makeNewUser(id: "alice"))
            XCTAssertEqual(status.code, .networkError)
            XCTAssertTrue(status.message.contains("rps.test"), status.message)
        }
        let t = ScriptedTransport { (_) throws(HTTPTransportError) -> HTTPResponse in throw .connectionRefused(host: "x") }
        let s = MPinSDK(context: TestContext(transport: t, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(s.initialize(config: ["backend": "http://x"]).code, .networkError)
        XCTAssertEqual(s.listUsers().0.code, .flowError, "no backend set")
    }

    func testTrustedDomains() {
        let s = sdk { _ in HTTPResponse(status: 500) }
        s.addTrustedDomain("example.org")
        XCTAssertEqual(s.testBackend("http://rps.example.org").code, .untrustedDomainError, "http is refused")
        XCTAssertEqual(s.testBackend("https://evil.test").code, .untrustedDomainError)
        XCTAssertEqual(s.testBackend("https://example.org.evil.test").code, .untrustedDomainError)
        XCTAssertNotEqual(s.testBackend("https://rps.example.org").code, .untrustedDomainError)
        s.clearTrustedDomains()
        XCTAssertEqual(s.testBackend("http://rps.test").code, .ok)
    }

    /// Points that do not decode are CRYPTO_ERROR, never a crash.
    func testUndecodablePoints() throws {
        let bad = String(repeating: "ff", count: 65)
        let mpinId = Array(#"{"mobile": 1, "issued": "2026-11-22 07:00:00", "userID": "alice", "salt": "00"}"#.utf8)
        let mpinIdHex = mpinId.map { String(format: "%02x", $0) }.joined()
        let s = sdk { r in
            let body: String
            if r.url.hasSuffix("/rps/user") { body = #"{"mpinId": "\#(mpinIdHex)", "regOTT": "aa", "active": true}"# }
            else if r.url.contains("/rps/signature/") { body = #"{"clientSecretShare": "\#(bad)", "params": "a=b"}"# }
            else { body = #"{"clientSecret": "\#(bad)"}"# }
            return HTTPResponse(status: 200, body: Array(body.utf8))
        }
        let user = s.makeNewUser(id: "alice")
        XCTAssertEqual(s.startRegistration(user).code, .ok)
        XCTAssertEqual(s.confirmRegistration(user).code, .ok)
        XCTAssertEqual(s.finishRegistration(user, pin: SecretBytes()).code, .pinInputCanceled)
        XCTAssertEqual(s.finishRegistration(user, pin: SecretBytes(copying: "1234".utf8)).code, .cryptoError)
        XCTAssertEqual(user.state, .activated, "state unchanged on failure")
    }
}
