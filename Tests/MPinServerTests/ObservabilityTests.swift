import Foundation
import GRDB
import MPinServer
import MPinWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `/health` and `/metrics` (Prometheus text format) of a running server.
final class ObservabilityTests: XCTestCase {
    /// The value of one sample line `NAME{LABELS} VALUE` (LABELS exactly as written), or nil.
    private func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    private func metrics(_ server: TestServer) async throws -> String {
        let r = try await server.client.get("/metrics")
        XCTAssertEqual(r.status, 200)
        XCTAssertTrue(r.headers["content-type"]?.hasPrefix("text/plain") ?? false)
        return String(decoding: r.body, as: UTF8.self)
    }

    func testMetricsCountLoginsByOutcomeBlocksRegistrationsAndTimeTheSteps() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            let before = try await metrics(server)
            XCTAssertEqual(sample(before, #"mpin_logins_total{outcome="ok"}"#), 0)

            var bob = MPinTestClient(http: server.client)
            try await bob.registerFully("bob@example.org", pin: "1234")
            var statuses: [Int] = []
            for pin in ["1234", "1111", "2222", "3333", "1234"] { statuses.append(try await bob.authenticate(pin: pin)) }
            XCTAssertEqual(statuses, [200, 401, 401, 410, 410])
            // A final step with an authOTT nobody issued.
            let unknown = try await server.client.post("/mpinAuthenticate",
                                                        ["mpinResponse": ["authOTT": String(repeating: "ab", count: 16)]])
            XCTAssertNotEqual(unknown.status, 200)

            let text = try await metrics(server)
            XCTAssertEqual(sample(text, #"mpin_logins_total{outcome="ok"}"#), 1)
            XCTAssertEqual(sample(text, #"mpin_logins_total{outcome="wrong_pin"}"#), 2)
            XCTAssertEqual(sample(text, #"mpin_logins_total{outcome="blocked"}"#), 2)
            XCTAssertEqual(sample(text, #"mpin_logins_total{outcome="refused"}"#), 1)
            XCTAssertEqual(sample(text, "mpin_blocks_total"), 1, "only the attempt that blocks counts as a block")
            XCTAssertEqual(sample(text, #"mpin_registrations_total{step="started"}"#), 1)
            XCTAssertEqual(sample(text, #"mpin_registrations_total{step="completed"}"#), 1)
            XCTAssertEqual(sample(text, "mpin_database_errors_total"), 0)
            for step in ["pass1", "pass2"] {
                XCTAssertEqual(sample(text, "mpin_login_step_duration_seconds_count{step=\"\(step)\"}"), 5)
            }
            XCTAssertEqual(sample(text, #"mpin_login_step_duration_seconds_count{step="authenticate"}"#), 6)
            XCTAssertGreaterThan(sample(text, #"mpin_login_step_duration_seconds_sum{step="pass2"}"#) ?? 0, 0)
            XCTAssertEqual(sample(text, #"mpin_login_step_duration_seconds_bucket{step="pass2",le="+Inf"}"#), 5)
            // No identity in any label or line.
            XCTAssertFalse(text.contains("bob"))
            XCTAssertFalse(text.lowercased().contains(bob.mpinIDHex.lowercased()))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testHealthIsAReadWhileTheDatabaseIsLockedElsewhereAndAWriteGets503() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            let ok = try await server.client.get("/health")
            XCTAssertEqual(ok.status, 200)
            XCTAssertEqual(ok.object?["status"]?.string, "ok")
            XCTAssertEqual(ok.object?["database"]?.string, "ok")
            XCTAssertEqual(ok.object?["keys"]?.string, "loaded")

            // Another process holding the write lock past the server's busy timeout (2 s): /health
            // reads (mpin-server(8), ENDPOINTS), so it still answers 200; a write waits for the
            // lock, then is a 503.
            let other = try DatabaseQueue(path: server.dataDir + "/mpin.sqlite")
            let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let holder = Thread {
                try? other.inTransaction(.immediate) { _ in locked.signal(); release.wait(); return .rollback }
            }
            holder.start()
            locked.wait()
            defer { release.signal() }  // also when an assertion below throws
            let during = try await server.client.get("/health")
            XCTAssertEqual(during.status, 200)
            XCTAssertEqual(during.object?["database"]?.string, "ok")
            let down = try await server.client.put("/rps/user", RegisterRequest(userId: "locked-out", mobile: 1, activateCode: nil))
            XCTAssertEqual(down.status, 503)
            let text = try await metrics(server)
            XCTAssertEqual(sample(text, "mpin_database_errors_total"), 1)
            release.signal()
            try await Task.sleep(nanoseconds: 50_000_000)
            let again = try await server.client.put("/rps/user", RegisterRequest(userId: "locked-out", mobile: 1, activateCode: nil))
            XCTAssertEqual(again.status, 200)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
