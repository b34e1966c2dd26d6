import MPinClient
import MPinLogin
import MPinTestSupport
import XCTest

/// The login's time budget (`timeout`) holds whatever the backend does: every request gets at
/// most what is left of it, and a backend that does not answer ends the login, typed as
/// unavailable, when the budget is spent, not when the backend gives up.
final class LoginBudgetTests: XCTestCase {
    /// A backend that would take 30 s to answer the time-permit request: the login of budget
    /// 1 s ends unavailable (timed out) about 1 s after it started, and sends nothing after.
    func testSlowBackendEndsTheLoginWithinItsBudget() throws {
        let h = try LoginHarness(timeout: 1)
        try h.register()
        h.backend.inject(.latency(.seconds(30)), at: .timePermit)
        let run = h.login(pin: "1234")
        guard case .unavailable(let why) = run.outcome else { return XCTFail("\(run.outcome)") }
        XCTAssertTrue(why.contains("timed out"), why)
        XCTAssertEqual(run.routes, [.clientSettings, .timePermit], "nothing is sent once the budget is spent")
        // Generous slack for a loaded machine; without the budget the login would last 30 s.
        XCTAssertLessThan(run.elapsed, .seconds(3), "the login overran its 1 s budget")
        for (route, request) in h.backend.log {
            let timeout = try XCTUnwrap(request.timeout, "\(String(describing: route)) was sent without a timeout")
            XCTAssertLessThanOrEqual(timeout, .seconds(1), "\(String(describing: route))")
        }
    }

    /// The budget covers the whole login, not each request: after a settings request of
    /// 0.7 s, the time-permit request (which would take 0.7 s too) gets the 0.3 s left and times
    /// out, though alone it would fit.
    func testEachRequestGetsOnlyWhatIsLeft() throws {
        let h = try LoginHarness(timeout: 1)
        try h.register()
        h.backend.inject(.latency(.milliseconds(700)), at: .clientSettings)
        h.backend.inject(.latency(.milliseconds(700)), at: .timePermit)
        let run = h.login(pin: "1234")
        guard case .unavailable = run.outcome else { return XCTFail("\(run.outcome)") }
        XCTAssertEqual(run.routes, [.clientSettings, .timePermit])
        let permit = run.events.compactMap { event -> ExchangeResult? in
            if case .exchange(.timePermit, _, let result, _) = event { result } else { nil }
        }
        guard case .failed(let why)? = permit.first else { return XCTFail("the permit request did not time out: \(permit)") }
        XCTAssertTrue(why.contains("timed out"), why)
        let timeout = try XCTUnwrap(h.backend.log.last?.request.timeout)
        XCTAssertLessThan(timeout, .milliseconds(400), "the time-permit request got more than the budget left")
    }
}
