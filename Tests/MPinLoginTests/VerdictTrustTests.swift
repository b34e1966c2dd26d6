import MPinClient
import MPinLogin
import MPinTestSupport
import XCTest

/// docs/SECURITY.md §6.1: the host believes a login's verdict only when it is signed with the key
/// its registration pinned, whoever answers on the backend's address. The impostor here is the
/// backend double after `replaceVerdictKey()`: it answers every request like the real backend
/// (it even holds the master secret), but signs with a key the host did not pin.
final class VerdictTrustTests: XCTestCase {
    /// The registration pins the backend's key, and a right PIN's verdict is signed with it.
    func testSignedVerdictIsBelieved() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        let body = try XCTUnwrap(h.backend.log.last { $0.route == .pass2 }?.request.body)
        XCTAssertTrue(String(decoding: body, as: UTF8.self).contains("\"verdictNonce\""), "the host sent a nonce with pass 2")
    }

    /// An OK signed with another key is refused: an impostor on the backend's port logs nobody in.
    func testVerdictSignedWithAnotherKeyIsRefused() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        try h.backend.replaceVerdictKey()
        let run = h.login(pin: "1234")
        guard case .failed(let why) = run.outcome else { return XCTFail("expected a refusal, got \(run.outcome)") }
        XCTAssertTrue(why.contains("not signed with the key pinned"), why)
    }

    /// An unsigned OK (a server that ignores the nonce) is refused too.
    func testUnsignedVerdictIsRefused() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        h.backend.signVerdicts(false)
        guard case .failed = h.login(pin: "1234").outcome else { return XCTFail("an unsigned OK was believed") }
    }

    /// A "blocked" answer from an impostor does not make the host delete the token: after the
    /// real backend is back, the right PIN still works.
    func testUnsignedBlockedKeepsTheToken() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        let tokens = h.storedTokens
        XCTAssertFalse(tokens.isEmpty)
        h.backend.signVerdicts(false)
        // Unsigned "wrong PIN"s are not believed either (docs/SECURITY.md §3).
        for pin in ["0000", "0001"] {
            guard case .failed = h.login(pin: pin).outcome else { return XCTFail("an unsigned 401 was believed") }
        }
        let third = h.login(pin: "0002")
        guard case .failed = third.outcome else { return XCTFail("an unsigned 410 was believed: \(third.outcome)") }
        XCTAssertEqual(h.storedTokens, tokens, "the token is still in the store")
        XCTAssertFalse(Login(config: h.config, platform: h.platform).isBlocked(unixUser: "alice"))
    }

    /// A signed "blocked" is believed: the identity is blocked and its token deleted.
    func testSignedBlockedDeletesTheToken() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        XCTAssertEqual(h.login(pin: "0000").outcome, .wrongPIN)
        XCTAssertEqual(h.login(pin: "0001").outcome, .wrongPIN)
        XCTAssertEqual(h.login(pin: "0002").outcome, .blocked)
        XCTAssertTrue(h.storedTokens.isEmpty)
    }

    /// A registration with a backend that cannot sign (a Milagro RPS) pins no key: its logins
    /// are refused over plain http, and over https without a CA named in mpin.conf, before the
    /// PIN is asked; with https and `cacert` they go through.
    func testUnsignedBackendNeedsHTTPSWithPinnedCA() throws {
        let h = try LoginHarness()
        h.backend.signVerdicts(false)
        try h.register(pin: "1234")
        let plain = h.login(pin: "1234")
        guard case .failed(let why) = plain.outcome else { return XCTFail("plain http without a signed verdict: \(plain.outcome)") }
        XCTAssertTrue(why.contains("https"), why)
        XCTAssertFalse(plain.pinAsked)
        XCTAssertEqual(plain.routes, [])

        h.config.caFile = "/etc/mpin/backend-ca.pem"
        guard case .failed = h.login(pin: "1234").outcome else { return XCTFail("http with a cacert is still plain http") }
    }

    /// The https rule itself, on every node of a login.
    func testUnsignedVerdictRefusalRule() {
        var config = LoginConfig()
        XCTAssertNotNil(config.unsignedVerdictRefusal(for: ["https://mpin.example.org"]), "https with the system's CAs")
        config.caFile = "/etc/mpin/ca.pem"
        XCTAssertNil(config.unsignedVerdictRefusal(for: ["https://mpin.example.org"]))
        XCTAssertNotNil(config.unsignedVerdictRefusal(for: ["https://a.example.org", "http://b.example.org"]))
        config.caFile = ""
        config.caPath = "/etc/mpin/ca.d"
        XCTAssertNil(config.unsignedVerdictRefusal(for: ["https://a.example.org", "https://b.example.org"]))
    }
}
