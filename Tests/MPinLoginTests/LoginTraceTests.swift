import MPinClient
import MPinJSON
import MPinLogin
import MPinTestSupport
import XCTest

/// The trace behind the PAM module's `debug` option: every step, in order, and no secret.
final class LoginTraceTests: XCTestCase {
    /// An event with its durations zeroed, so that sequences compare exactly.
    private func shape(_ event: LoginEvent) -> LoginEvent {
        switch event {
        case .exchange(let step, let origin, let result, _): .exchange(step, origin: origin, result: result, elapsed: .zero)
        case .outcome(let outcome, _): .outcome(outcome, duration: .zero)
        default: event
        }
    }

    private func ok(_ step: LoginStep) -> LoginEvent {
        .exchange(step, origin: "http://mpin.test", result: .status(200), elapsed: .zero)
    }

    func testEventsFollowTheLoginInOrder() throws {
        let h = try LoginHarness()
        try h.register()
        let account = LoginEvent.account(identity: "alice@example.org", origin: "http://mpin.test")
        // The second D-TA under the backend's origin (/dta/), as mpin-server serves it.
        let dta = LoginEvent.exchange(.dtaTimePermit, origin: "http://mpin.test", result: .status(200), elapsed: .zero)

        let first = h.login(pin: "1234")
        XCTAssertEqual(first.events.map(shape), [
            account, .settingsCache(hit: false), ok(.clientSettings), ok(.timePermit), dta, ok(.pass1), ok(.pass2),
            ok(.authenticate), .settingsKept, .outcome(.success, duration: .zero),
        ])
        let second = h.login(pin: "1234")
        XCTAssertEqual(second.events.map(shape), [
            account, .settingsCache(hit: true), ok(.timePermit), .permitShareFromDevice, ok(.pass1), ok(.pass2),
            ok(.authenticate), .outcome(.success, duration: .zero),
        ])

        h.backend.moveEndpoints(to: "/rps2")
        let retried = h.login(pin: "1234")
        XCTAssertEqual(retried.events.map(shape), [
            account, .settingsCache(hit: true),
            .exchange(.timePermit, origin: "http://mpin.test", result: .status(404), elapsed: .zero),
            .settingsDropped(retrying: true), ok(.clientSettings), ok(.timePermit), .permitShareFromDevice,
            ok(.pass1), ok(.pass2), ok(.authenticate), .settingsKept, .outcome(.success, duration: .zero),
        ])

        let wrong = h.login(pin: "4321")
        XCTAssertEqual(wrong.events.map(shape).suffix(3), [
            ok(.pass2), .exchange(.authenticate, origin: "http://mpin.test", result: .status(401), elapsed: .zero),
            .outcome(.wrongPIN, duration: .zero),
        ])

        h.backend.inject(.transport(.connectionRefused(host: "http://mpin.test")), at: .pass2)
        let failed = h.login(pin: "1234")
        XCTAssertEqual(failed.events.map(shape).suffix(3).map(\.description), [
            "pass 2: failed (connection refused by http://mpin.test) from http://mpin.test in 0 ms",
            "kept client settings dropped", "outcome UNAVAILABLE after 0 ms",
        ])

        let unknown = h.login("nobody", pin: "1234")
        XCTAssertEqual(unknown.events.map(shape), [.outcome(.unknownUser, duration: .zero)])
    }

    /// The outcome's duration is the login's, and each exchange's is its request's.
    func testDurationsAreMeasured() throws {
        let h = try LoginHarness()
        try h.register()
        h.backend.inject(.latency(.milliseconds(300)), at: .pass1)
        let run = h.login(pin: "1234")
        XCTAssertEqual(run.outcome, .success)
        guard case .exchange(.pass1, _, _, let pass1)? = run.events.first(where: {
            if case .exchange(.pass1, _, _, _) = $0 { true } else { false }
        }), case .outcome(_, let total)? = run.events.last else { return XCTFail("\(run.events)") }
        XCTAssertGreaterThanOrEqual(pass1, .milliseconds(300))
        XCTAssertGreaterThanOrEqual(total, pass1)
        XCTAssertLessThanOrEqual(total, run.elapsed)
    }

    /// No event shows the PIN, the token, an OTT, the backend's user information, a path or
    /// the mpinId (which the permit URLs carry), whatever the login's outcome.
    func testNoSecretInAnyEvent() throws {
        let h = try LoginHarness(backendOrigin: "http://admin:hunter2@mpin.test")
        let pin = "73915", wrong = "86024"
        try h.register(pin: pin)
        var events: [LoginEvent] = []
        events += h.login(pin: pin).events
        events += h.login(pin: wrong).events
        h.backend.moveEndpoints(to: "/rps2")
        events += h.login(pin: pin).events
        h.backend.inject(.status(500), at: .authenticate)
        events += h.login(pin: pin).events
        XCTAssertGreaterThan(events.count, 20)

        let tokens = h.storedTokens
        XCTAssertEqual(tokens.count, 1)
        let mpinIds = h.backend.log.compactMap { entry in
            entry.route == .pass1 ? entry.request.body.flatMap { (try? JSONParser().parse($0))?["mpin_id"]?.stringValue } : nil
        }
        XCTAssertFalse(mpinIds.isEmpty)
        let secrets = [pin, wrong, "hunter2", "admin"] + tokens + h.backend.issuedSecrets + mpinIds
        XCTAssertGreaterThan(h.backend.issuedSecrets.count, 4, "regOTT and authOTTs")
        for event in events {
            var text = event.description + " "
            dump(event, to: &text)  // every associated value, whatever the description shows
            for secret in secrets { XCTAssertFalse(text.contains(secret), "\(text) shows a secret") }
            XCTAssertFalse(text.contains("/rps"), "\(text) shows a path")
            XCTAssertFalse(text.contains("@mpin.test"), "\(text) shows user information")
        }
        XCTAssertTrue(events.contains(.account(identity: "alice@example.org", origin: "http://mpin.test")))
    }

    /// Requests are named from the client settings in use, whatever they call their endpoints;
    /// only a fetched RPS share without a second-share request counts as the device's cache.
    func testStepsAreNamedFromTheSettings() {
        let sent = RecordingTransport(base: ScriptedTransport { _ in HTTPResponse(status: 200) })
        let events = Collected<LoginEvent>()
        let tracer = TracingTransport(base: sent) { events.append($0) }
        let base = "https://u:p@mfa.test"
        XCTAssertEqual(tracer.step(of: base + "/rps/clientSettings"), .clientSettings)
        XCTAssertEqual(tracer.step(of: base + "/rps/pass1"), .other, "nothing but the settings before they are known")
        tracer.settings = .object([
            ("mpinAuthServerURL", .string(base + "/auth")), ("authenticateURL", .string(base + "/done")),
            ("timePermitsURL", .string(base + "/permits")), ("timePermitsStorageURL", .string("https://store.test/b")),
            ("certivoxURL", .string("https://dta.test/v3/")),
        ])
        let cases: [(String, LoginStep)] = [
            (base + "/auth/pass1", .pass1), (base + "/auth/pass2", .pass2), (base + "/done", .authenticate),
            (base + "/permits/7b22", .timePermit), ("https://store.test/b/app/20000/ab", .permitStore),
            ("https://dta.test/v3/timePermit?hash_mpin_id=ab", .dtaTimePermit), (base + "/auth/pass3", .other),
            (base + "/permits", .other), ("https://dta.test/v3/clientSecret?x", .other),
        ]
        for (url, step) in cases { XCTAssertEqual(tracer.step(of: url), step, url) }

        for (urls, fromDevice) in [([base + "/permits/1"], true), ([], false),
                                   ([base + "/permits/1", "https://dta.test/v3/timePermit?a=b"], false),
                                   ([base + "/permits/1", "https://store.test/b/x"], false)] {
            tracer.markSteps()
            for url in urls { _ = try? tracer.send(HTTPRequest(method: .get, url: url)) }
            XCTAssertEqual(tracer.secondShareFromDevice, fromDevice, "\(urls)")
        }
        XCTAssertEqual(events.all.count, 5)
        XCTAssertEqual(events.all.first?.description.hasPrefix("time permit (RPS share): HTTP 200 from https://mfa.test in "), true,
                       "\(String(describing: events.all.first))")
    }
}
