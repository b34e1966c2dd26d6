import MPinClient
import MPinTestSupport
import XCTest

/// MPinMFA's reading of answers mpin-server never sends: GetAccessCode's `qrURL` without a
/// code, and a service that is not "online".
final class MFAResponseTests: XCTestCase {
    private func mfa(answering body: String, status: Int = 200) -> MPinMFA {
        let transport = ScriptedTransport { _ in HTTPResponse(status: status, body: Array(body.utf8)) }
        return MPinMFA(context: TestContext(transport: transport, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
    }

    func testGetAccessCodeCutsAfterTheLastHash() {
        let r = mfa(answering: #"{"qrURL": "https://mfa.example/#x#0123abcd"}"#).getAccessCode(authzURL: "https://mfa.example/authorize?a=b")
        XCTAssertEqual(r.status.code, .ok)
        XCTAssertEqual(r.accessCode, "0123abcd")
    }

    func testGetAccessCodeWithoutACodeIsAParseError() {
        for body in [#"{"qrURL": "https://mfa.example/"}"#, #"{"qrURL": "https://mfa.example/#"}"#, #"{"accessCode": "ab"}"#, "{}"] {
            let r = mfa(answering: body).getAccessCode(authzURL: "https://mfa.example/authorize")
            XCTAssertEqual(r.status.code, .responseParseError, body)
            XCTAssertEqual(r.accessCode, "", body)
        }
        XCTAssertEqual(mfa(answering: "{}", status: 400).getAccessCode(authzURL: "https://mfa.example/authorize").status.code,
                       .httpRequestError)
    }

    /// Confined to the backend's origin (a host command over plain http), the MFA flavour sends
    /// nothing to the other origins client settings name: whoever held the backend's port when
    /// they were fetched cannot have a login code refused, or a code approved, elsewhere.
    func testConfinedItSendsNothingToAnotherOrigin() {
        let settings = #"{"mpinAuthServerURL": "http://mpin.test/rps", "registerURL": "http://mpin.test/rps/user", "#
            + #""signatureURL": "http://mpin.test/rps/signature", "certivoxURL": "http://mpin.test/dta/", "#
            + #""authenticateURL": "http://mpin.test/mpinAuthenticate", "timePermitsURL": "http://mpin.test/rps/timePermit", "#
            + #""codeStatusURL": "http://elsewhere.test:8005/rps/codeStatus"}"#
        let recording = RecordingTransport(base: ScriptedTransport { _ in HTTPResponse(status: 200, body: Array(settings.utf8)) })
        let mfa = MPinMFA(context: TestContext(transport: recording, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(mfa.initialize().code, .ok)
        XCTAssertTrue(mfa.confine(toOriginOf: "http://mpin.test"))
        XCTAssertEqual(mfa.setBackend("http://mpin.test").code, .ok)
        XCTAssertEqual(mfa.abortSession(accessCode: "1234567").code, .untrustedDomainError)
        XCTAssertEqual(mfa.getSessionDetails(accessCode: "1234567").status.code, .untrustedDomainError)
        XCTAssertEqual(recording.count(containing: "elsewhere.test"), 0, "nothing went to the other origin")
        // Not confined (https with the host's CA), the same settings are followed, as the SDK does.
        let free = RecordingTransport(base: ScriptedTransport { _ in HTTPResponse(status: 200, body: Array(settings.utf8)) })
        let open = MPinMFA(context: TestContext(transport: free, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(open.initialize().code, .ok)
        XCTAssertEqual(open.setBackend("http://mpin.test").code, .ok)
        _ = open.abortSession(accessCode: "1234567")
        XCTAssertEqual(free.count(containing: "elsewhere.test"), 1)
    }

    func testAServiceThatIsNotOnlineIsRefused() {
        let body = #"{"type": "offline", "name": "n", "url": "https://b.example", "rps_prefix": "rps", "logo_url": ""}"#
        XCTAssertEqual(mfa(answering: body).getServiceDetails(url: "https://mfa.example").status.code, .responseParseError)
    }
}
