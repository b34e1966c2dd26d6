import MPinClient
import MPinJSON
import MPinLogin
import MPinTestSupport
import XCTest

/// Kept client settings, and the one retry with fresh ones: only before FinishAuthentication,
/// so pass 2 (the PIN proof) is never sent twice for one login.
final class LoginRetryTests: XCTestCase {
    typealias Route = MPinBackendDouble.Route

    /// The first login fetches the settings and keeps them; the next one sends no settings
    /// request (and takes the D-TA share from the device cache).
    func testFirstLoginKeepsSettingsForTheNext() throws {
        let h = try LoginHarness()
        try h.register()
        XCTAssertFalse(h.cacheExists)
        let first = h.login(pin: "1234")
        XCTAssertEqual(first.outcome, .success)
        XCTAssertEqual(first.identity, "alice@example.org")
        XCTAssertEqual(first.routes, [.clientSettings, .timePermit, .dtaTimePermit, .pass1, .pass2, .authenticate])
        XCTAssertNotNil(h.cache.read(), "the settings are kept")
        let second = h.login(pin: "1234")
        XCTAssertEqual(second.outcome, .success)
        XCTAssertEqual(second.routes, [.timePermit, .pass1, .pass2, .authenticate])
    }

    /// The backend moved its endpoints: the kept settings fail at StartAuthentication (404),
    /// are dropped, and the login succeeds at once with fresh ones, which are kept instead.
    func testStaleSettingsAreReplacedBeforeFinishAuthentication() throws {
        let h = try LoginHarness()
        try h.register()
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        h.backend.moveEndpoints(to: "/rps2")
        let run = h.login(pin: "1234")
        XCTAssertEqual(run.outcome, .success)
        XCTAssertEqual(run.routes, [nil, .clientSettings, .timePermit, .pass1, .pass2, .authenticate],
                       "the stale permit URL (404), then one fresh round")
        XCTAssertEqual(h.cache.read()?["timePermitsURL"]?.stringValue, "http://mpin.test/rps2/timePermit")
    }

    /// A failure once FinishAuthentication has started (pass 1, pass 2 or the final step) ends
    /// the login: no fresh settings, pass 2 sent at most once. The kept settings are dropped.
    func testNoRetryOnceFinishAuthenticationStarted() throws {
        let h = try LoginHarness()
        try h.register()
        for route in [Route.pass1, .pass2, .authenticate] {
            XCTAssertEqual(h.login(pin: "1234").outcome, .success, "\(route): a login that keeps the settings")
            XCTAssertNotNil(h.cache.read())
            h.backend.inject(.status(503), at: route)
            let run = h.login(pin: "1234")
            h.backend.inject(nil, at: route)
            guard case .unavailable = run.outcome else { return XCTFail("\(route): \(run.outcome)") }
            XCTAssertEqual(run.routes.filter { $0 == .clientSettings }.count, 0, "\(route): no second round")
            XCTAssertEqual(run.routes.filter { $0 == .pass1 }.count, 1, "\(route)")
            XCTAssertLessThanOrEqual(run.routes.filter { $0 == .pass2 }.count, 1, "\(route): pass 2 at most once")
            XCTAssertFalse(h.cacheExists, "\(route): the kept settings are dropped")
        }
        // A transport failure after pass 2 was sent is no different.
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        h.backend.inject(.transport(.connectionFailed(host: "http://mpin.test", detail: "reset")), at: .authenticate)
        let run = h.login(pin: "1234")
        guard case .unavailable = run.outcome else { return XCTFail("\(run.outcome)") }
        XCTAssertEqual(run.routes, [.timePermit, .pass1, .pass2, .authenticate])
        XCTAssertFalse(h.cacheExists)
    }

    /// Kept settings that fail before FinishAuthentication are dropped even when the fresh
    /// round fails too; nothing is kept from a failed login, and there is no third round.
    func testFailedLoginsKeepNoSettings() throws {
        let h = try LoginHarness()
        try h.register()
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        h.backend.inject(.status(503), at: .timePermit)
        let run = h.login(pin: "1234")
        guard case .unavailable = run.outcome else { return XCTFail("\(run.outcome)") }
        XCTAssertEqual(run.routes, [.timePermit, .clientSettings, .timePermit])
        XCTAssertFalse(h.cacheExists)
        // Without kept settings a failure is final at once.
        let fresh = h.login(pin: "1234")
        XCTAssertEqual(fresh.routes, [.clientSettings, .timePermit])
        XCTAssertFalse(h.cacheExists)
        h.backend.inject(.status(500), at: .clientSettings)
        let noSettings = h.login(pin: "1234")
        guard case .unavailable = noSettings.outcome else { return XCTFail("\(noSettings.outcome)") }
        XCTAssertEqual(noSettings.routes, [.clientSettings])
    }
}
