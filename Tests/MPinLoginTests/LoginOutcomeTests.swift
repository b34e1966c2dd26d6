import MPinClient
import MPinLogin
import MPinTestSupport
import XCTest

/// What a login ends with for a wrong PIN, a blocked identity, an unknown user, no PIN.
final class LoginOutcomeTests: XCTestCase {
    /// A wrong PIN is refused by the backend's pass-2 check and reported as such, once; the
    /// settings stay kept (the PIN, not the backend, was wrong). A right PIN works afterwards.
    func testWrongPIN() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        let run = h.login(pin: "1243")
        XCTAssertEqual(run.outcome, .wrongPIN)
        XCTAssertEqual(run.identity, "alice@example.org")
        XCTAssertEqual(run.routes, [.clientSettings, .timePermit, .dtaTimePermit, .pass1, .pass2, .authenticate])
        XCTAssertNotNil(h.cache.read(), "a wrong PIN keeps the settings")
        let again = h.login(pin: "1234")
        XCTAssertEqual(again.outcome, .success)
        XCTAssertEqual(again.routes, [.timePermit, .dtaTimePermit, .pass1, .pass2, .authenticate],
                       "kept settings; the D-TA share is cached only after a success")
    }

    /// The third wrong PIN in a row blocks the identity (HTTP 410): the login says so, and
    /// the next one refuses locally, without asking for a PIN or contacting the backend.
    func testThirdWrongPINBlocks() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        XCTAssertEqual(h.login(pin: "0000").outcome, .wrongPIN)
        XCTAssertEqual(h.login(pin: "0001").outcome, .wrongPIN)
        XCTAssertEqual(h.login(pin: "0002").outcome, .blocked)
        let after = h.login(pin: "1234")
        XCTAssertEqual(after.outcome, .blocked)
        XCTAssertFalse(after.pinAsked)
        XCTAssertEqual(after.routes, [])
        XCTAssertTrue(Login(config: h.config, platform: h.platform).isBlocked(unixUser: "alice"))
    }

    /// A Unix user without a mapping, or mapped to an identity the store does not hold, is
    /// unknown: no PIN is asked for and no request is sent.
    func testUnknownUser() throws {
        let h = try LoginHarness()
        try h.register()
        let unmapped = h.login("bob", pin: "1234")
        XCTAssertEqual(unmapped.outcome, .unknownUser)
        XCTAssertEqual(unmapped.identity, "")
        XCTAssertFalse(unmapped.pinAsked)
        XCTAssertEqual(unmapped.routes, [])

        try AccountMap(storage: h.plain).set(.init(identity: "carol@example.org", backend: h.config.backend), for: "carol")
        let unregistered = h.login("carol", pin: "1234")
        XCTAssertEqual(unregistered.outcome, .unknownUser)
        XCTAssertEqual(unregistered.identity, "carol@example.org")
        XCTAssertFalse(unregistered.pinAsked)
        XCTAssertEqual(unregistered.routes, [])
    }

    /// No PIN (the conversation failed, or an empty answer) ends the login before any request.
    func testNoPIN() throws {
        let h = try LoginHarness()
        try h.register()
        for pin in [nil, ""] as [String?] {
            let run = h.login(pin: pin)
            XCTAssertEqual(run.outcome, .pinCanceled)
            XCTAssertTrue(run.pinAsked)
            XCTAssertEqual(run.routes, [])
        }
    }
}
