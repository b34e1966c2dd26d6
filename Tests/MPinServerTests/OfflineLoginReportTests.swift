import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// A host's offline logins reported with the user's next online login (docs/PROTOCOL.md
/// §4.5.2): kept only with a successful login of a host token, only when bound to that login's
/// verdict nonce, acknowledged with a signature, and shown by `user show`; a relay that
/// rewrites the report (and not the nonce) gets nothing recorded and no acknowledgment.
final class OfflineLoginReportTests: XCTestCase {
    private let logins = [OfflineLoginReport.Login(time: 1_790_000_000, service: "sudo", outcome: "OK", id: "0123456789abcdef"),
                          OfflineLoginReport.Login(time: 1_790_000_100, service: "sshd", outcome: "INCORRECT_PIN", id: "1111111111111111"),
                          // A second wrong PIN within the same second: a login of its own.
                          OfflineLoginReport.Login(time: 1_790_000_100, service: "sshd", outcome: "INCORRECT_PIN", id: "2222222222222222")]

    /// A host token (scope `host`), as `mpinctl register` makes: only its logins report.
    private func registerHost(_ server: TestServer, _ userID: String) async throws -> MPinTestClient {
        var client = MPinTestClient(http: server.client)
        let registered = try await server.client.put("/rps/user", RegisterRequest(userId: userID, scope: "host"))
        let reg = try registered.decode(RegisterResponse.self)
        client.mpinIDHex = reg.mpinId
        client.regOTT = reg.regOTT
        try await client.confirmAndFinish(pin: "1234")
        return client
    }

    private func verdictKey(_ server: TestServer) async throws -> String {
        let settings = try await server.client.get("/rps/clientSettings").decode(ClientSettings.self)
        return try XCTUnwrap(settings.verdictKey)
    }

    /// Pass 1 and 2 with the report's nonce, then the final step carrying `sent` (the report
    /// as it left the host, or as a relay rewrote it); the answer and the nonce.
    private func login(_ client: MPinTestClient, _ server: TestServer, pin: String, report: OfflineLoginReport,
                       sent: ((OfflineLoginReport) -> OfflineLoginReport)? = nil) async throws -> (HTTPResult, [UInt8]) {
        let salt = try SystemRandom.bytes(32)
        var bound = report
        bound.salt = Hex.encode(salt)
        let nonce = bound.nonce(salt: salt)
        let (p2, _) = try await client.passes(pin: pin, echo: true, verdictNonce: nonce)
        let body = AuthenticateRequest(mpinResponse: MPinResponse(p2), offlineLogins: sent?(bound) ?? bound)
        return (try await server.client.post("/mpinAuthenticate", body), nonce)
    }

    func testABoundReportIsRecordedWithASuccessOnly() async throws {
        let server = try await TestServer(storage: .sqlite)
        try await server.start()
        do {
            let alice = try await registerHost(server, "alice@example.com")
            let report = OfflineLoginReport(host: "web1.example", logins: logins)
            let key = try await verdictKey(server)

            // A wrong PIN: the report is not kept (nothing proved it is alice's host).
            let (wrong, _) = try await login(alice, server, pin: "9999", report: report)
            XCTAssertEqual(wrong.status, 401)
            XCTAssertNil(try wrong.decode(RPAAuthenticateResponse.self).offlineLoginsRecorded)
            let none = try await server.admin().show(userID: "alice@example.com")
            XCTAssertEqual(none.offlineLogins, [])

            // The right PIN: kept; the verdict, and the count of logins new to the server, are
            // signed over the report's nonce.
            let (ok, nonce) = try await login(alice, server, pin: "1234", report: report)
            XCTAssertEqual(ok.status, 200)
            let answer = try ok.decode(RPAAuthenticateResponse.self)
            XCTAssertEqual(answer.offlineLoginsRecorded, 3)
            XCTAssertTrue(Verdict.verify(answer.verdictSignature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID,
                                         userID: "alice@example.com", status: 200, context: Verdict.tokenContext))
            XCTAssertTrue(Verdict.verify(answer.offlineLoginsSignature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID,
                                         userID: "alice@example.com", status: 200, context: Verdict.offlineLoginsRecordedContext(3)))
            XCTAssertFalse(Verdict.verify(answer.offlineLoginsSignature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID,
                                          userID: "alice@example.com", status: 200, context: Verdict.offlineLoginsRecordedContext(4)),
                           "the signature is over the count")
            let shown = try await server.admin().show(userID: "alice@example.com")
            XCTAssertEqual(shown.offlineLogins.map(\.service), ["sshd", "sshd", "sudo"])
            XCTAssertEqual(shown.offlineLogins.map(\.outcome), ["INCORRECT_PIN", "INCORRECT_PIN", "OK"])
            XCTAssertEqual(shown.offlineLogins.first?.host, "web1.example")
            XCTAssertEqual(shown.offlineLogins.first?.source, "127.0.0.1")
            XCTAssertEqual(shown.offlineLogins.first?.fingerprint, shown.identities.first?.fingerprint)

            // The same report again (the host lost the answer): nothing new.
            let (again, againNonce) = try await login(alice, server, pin: "1234", report: report)
            let acknowledged = try again.decode(RPAAuthenticateResponse.self)
            XCTAssertEqual(acknowledged.offlineLoginsRecorded, 0)
            XCTAssertTrue(Verdict.verify(acknowledged.offlineLoginsSignature, publicKeyHex: key, nonce: againNonce,
                                         mpinID: alice.mpinID, userID: "alice@example.com", status: 200,
                                         context: Verdict.offlineLoginsRecordedContext(0)))
            // Another login in the same second through the same service, in a later report: a
            // login of its own (its id), not the first one sent again.
            let sameSecond = OfflineLoginReport(host: "web1.example",
                                                logins: [.init(time: 1_790_000_000, service: "sudo", outcome: "OK", id: "6666666666666666")])
            let (later, _) = try await login(alice, server, pin: "1234", report: sameSecond)
            XCTAssertEqual(try later.decode(RPAAuthenticateResponse.self).offlineLoginsRecorded, 1)
            let metrics = String(decoding: try await server.client.get("/metrics").body, as: UTF8.self)
            XCTAssertTrue(metrics.contains(#"mpin_offline_logins_reported_total{outcome="ok"} 2"#), metrics)
            XCTAssertTrue(metrics.contains(#"mpin_offline_logins_reported_total{outcome="wrong_pin"} 2"#), metrics)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// A relay between the host and the backend (plain http, a port held during a restart)
    /// rewrites the report: an offline login added, the host renamed, a login dropped. The
    /// login still succeeds at the server, but nothing is recorded, since the report no longer
    /// hashes to the nonce in the authOTT. Nor is a report whose salt was swapped, or one sent
    /// by a login that bound a plain random nonce (a report of another login replayed).
    func testARewrittenOrUnboundReportRecordsNothing() async throws {
        let server = try await TestServer(storage: .sqlite)
        try await server.start()
        do {
            let alice = try await registerHost(server, "alice@example.com")
            let report = OfflineLoginReport(host: "web1.example", logins: logins)
            let rewrites: [(String, (OfflineLoginReport) -> OfflineLoginReport)] = [
                ("a login added", { var r = $0; r.logins.append(.init(time: 1_790_000_200, service: "su", outcome: "OK", id: "3333333333333333")); return r }),
                ("an id changed", { var r = $0; r.logins[0].id = "4444444444444444"; return r }),
                ("the host renamed", { var r = $0; r.host = "db1.example"; return r }),
                ("a login dropped", { var r = $0; r.logins.removeLast(); return r }),
                ("an outcome changed", { var r = $0; r.logins[1].outcome = "OK"; return r }),
                ("the salt swapped", { var r = $0; r.salt = String(repeating: "ab", count: 32); return r }),
                ("a malformed service", { var r = $0; r.logins[0].service = "sudo login"; return r }),
            ]
            for (what, rewrite) in rewrites {
                let (answer, _) = try await login(alice, server, pin: "1234", report: report, sent: rewrite)
                XCTAssertEqual(answer.status, 200, what)
                let decoded = try answer.decode(RPAAuthenticateResponse.self)
                XCTAssertNil(decoded.offlineLoginsRecorded, "\(what): refused, so no acknowledgment for the host to forget on")
                XCTAssertNil(decoded.offlineLoginsSignature, what)
            }
            // A login dated more than a day ahead of the server's clock (it would outlive every
            // newer login in the per-user bound): refused, bound or not.
            let ahead = OfflineLoginReport(host: "web1.example",
                                           logins: [.init(time: Int64(Date().timeIntervalSince1970) + 3 * 86_400, service: "sudo", outcome: "OK",
                                                          id: "5555555555555555")])
            let (future, _) = try await login(alice, server, pin: "1234", report: ahead)
            XCTAssertEqual(future.status, 200)
            XCTAssertNil(try future.decode(RPAAuthenticateResponse.self).offlineLoginsRecorded)
            // A report with a login that bound a random nonce (not the report's).
            let (p2, _) = try await alice.passes(pin: "1234", echo: true, verdictNonce: try SystemRandom.bytes(32))
            var replayed = report
            replayed.salt = Hex.encode(try SystemRandom.bytes(32))
            let unbound = try await server.client.post("/mpinAuthenticate",
                                                       AuthenticateRequest(mpinResponse: MPinResponse(p2), offlineLogins: replayed))
            XCTAssertEqual(unbound.status, 200)
            XCTAssertNil(try unbound.decode(RPAAuthenticateResponse.self).offlineLoginsRecorded)
            // A member that is not a report at all: ignored, the login answered as ever.
            let (p2b, _) = try await alice.passes(pin: "1234", echo: true)
            var body = try JSONSerialization.jsonObject(with: JSONEncoder().encode(AuthenticateRequest(mpinResponse: MPinResponse(p2b))))
                as? [String: Any] ?? [:]
            body["offlineLogins"] = ["host": 7, "logins": "none"]
            let odd = try await server.client.send("POST", "/mpinAuthenticate", body: try JSONSerialization.data(withJSONObject: body))
            XCTAssertEqual(odd.status, 200, String(decoding: odd.body, as: UTF8.self))
            let shown = try await server.admin().show(userID: "alice@example.com")
            XCTAssertEqual(shown.offlineLogins, [], "nothing a relay sent was kept")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// Only a host token's own login reports: a device's registration (no scope), whose user
    /// does not check a signature on success, gets no report kept even when it is bound, so a
    /// relay cannot make a device's approval or web login carry a forged one unseen.
    func testOnlyAHostTokensLoginReports() async throws {
        let server = try await TestServer(storage: .sqlite)
        try await server.start()
        do {
            var device = MPinTestClient(http: server.client)
            try await device.registerFully("bob@example.com", pin: "1234")
            let (answer, _) = try await login(device, server, pin: "1234", report: OfflineLoginReport(host: "forged", logins: logins))
            XCTAssertEqual(answer.status, 200)
            XCTAssertNil(try answer.decode(RPAAuthenticateResponse.self).offlineLoginsRecorded)
            let shown = try await server.admin().show(userID: "bob@example.com")
            XCTAssertEqual(shown.offlineLogins, [])
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testReportBoundsAndBinding() throws {
        let salt = [UInt8](repeating: 7, count: 32)
        var report = OfflineLoginReport(host: "web1", salt: Hex.encode(salt), logins: logins)
        XCTAssertTrue(report.isWellFormed)
        XCTAssertTrue(report.isBound(to: report.nonce(salt: salt)))
        XCTAssertFalse(report.isBound(to: nil))
        XCTAssertFalse(report.isBound(to: [UInt8](repeating: 0, count: 32)))
        // A newline in a name would let one field run into the next in the bound bytes.
        for bad in ["", "web1\nlogin 1 sudo OK", String(repeating: "h", count: 254), "wéb"] {
            report.host = bad
            XCTAssertFalse(report.isWellFormed, bad)
        }
        report.host = "web1"
        report.logins = Array(repeating: logins[0], count: 51)
        XCTAssertFalse(report.isWellFormed, "more than 50 logins")
        report.logins = []
        XCTAssertFalse(report.isWellFormed, "no login")
        report.logins = [.init(time: 1, service: "sudo", outcome: "BLOCKED", id: "0123456789abcdef")]
        XCTAssertFalse(report.isWellFormed, "an outcome hosts do not record")
        report.logins = [.init(time: 0, service: "sudo", outcome: "OK", id: "0123456789abcdef")]
        XCTAssertFalse(report.isWellFormed, "time 0")
        for id in ["", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdefa", "0123456789abcdeg"] {
            report.logins = [.init(time: 1, service: "sudo", outcome: "OK", id: id)]
            XCTAssertFalse(report.isWellFormed, "id \(id)")
        }
        report.logins = logins
        report.salt = "00"
        XCTAssertFalse(report.isWellFormed, "a salt of one byte")
    }
}
