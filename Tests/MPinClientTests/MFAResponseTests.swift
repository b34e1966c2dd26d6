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

    func testAServiceThatIsNotOnlineIsRefused() {
        let body = #"{"type": "offline", "name": "n", "url": "https://b.example", "rps_prefix": "rps", "logo_url": ""}"#
        XCTAssertEqual(mfa(answering: body).getServiceDetails(url: "https://mfa.example").status.code, .responseParseError)
    }
}
