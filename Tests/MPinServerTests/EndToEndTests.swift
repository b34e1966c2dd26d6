import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// Registration and authentication over real HTTP with MPinCrypto as the client.
final class EndToEndTests: XCTestCase {
    func testRegisterAuthenticateOTPAndReplays() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            let reg = try await alice.register("alice@example.com")
            XCTAssertTrue(reg.active)
            XCTAssertEqual(MPinIdentity.parse(alice.mpinID)?.userID, "alice@example.com")
            try await alice.confirmAndFinish(pin: "1234")

            // The share is issued once: a second ConfirmRegistration gets 400.
            let again = try await server.client.get("/rps/signature/\(alice.mpinIDHex)?regOTT=\(alice.regOTT)")
            XCTAssertEqual(again.status, 400)

            let (p2, pass2Body) = try await alice.passes(pin: "1234")
            XCTAssertNil(p2.OTP)
            XCTAssertEqual(p2.authOTT.count, 32)
            let v1 = try await alice.finalStep(p2)
            XCTAssertEqual(v1, 200)
            // authOTT is single use.
            let v2 = try await alice.finalStep(p2)
            XCTAssertEqual(v2, 408)
            // Pass-1 state was consumed by pass 2: replaying pass 2 is refused.
            let replay = try await server.client.send("POST", "/rps/pass2", body: pass2Body)
            XCTAssertEqual(replay.status, 403)
            XCTAssertNotNil(replay.object?["message"])

            // OTP requested: six digits, returned with the verdict too.
            let (otp2, _) = try await alice.passes(pin: "1234", otp: true)
            let otp = try XCTUnwrap(otp2.OTP)
            XCTAssertEqual(otp.count, 6)
            XCTAssertTrue(otp.allSatisfy(\.isNumber))
            let verdict = try await server.client.post("/authenticate", TokenAuthenticateRequest(authOTT: otp2.authOTT))
            XCTAssertEqual(verdict.status, 200)
            let body = try verdict.decode(TokenAuthenticateResponse.self)
            XCTAssertEqual(body.userId, "alice@example.com")
            XCTAssertEqual(body.mpinId, alice.mpinIDHex)
            XCTAssertEqual(body.OTP, otp)

            // Upper-case hex from a client finds the same records.
            var upper = alice
            upper.mpinIDHex = alice.mpinIDHex.uppercased()
            let v3 = try await upper.authenticate(pin: "1234")
            XCTAssertEqual(v3, 200)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testWrongPINBlocksThenUnblock() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            var bob = MPinTestClient(http: server.client)
            try await bob.registerFully("bob", pin: "1234")
            let v4 = try await bob.authenticate(pin: "1235")
            XCTAssertEqual(v4, 401)
            let v5 = try await bob.authenticate(pin: "1234")
            XCTAssertEqual(v5, 200)  // success resets the counter
            let v6 = try await bob.authenticate(pin: "1111")
            XCTAssertEqual(v6, 401)
            let v7 = try await bob.authenticate(pin: "1112")
            XCTAssertEqual(v7, 401)
            let v8 = try await bob.authenticate(pin: "1113")
            XCTAssertEqual(v8, 410)
            let v9 = try await bob.authenticate(pin: "1234")
            XCTAssertEqual(v9, 410)  // blocked even with the right PIN
            let listed = try server.admin().list().first { $0.userId == "bob" }
            XCTAssertEqual(listed?.blocked, true)
            try server.admin().unblock(userID: "bob")
            let v10 = try await bob.authenticate(pin: "1234")
            XCTAssertEqual(v10, 200)
            XCTAssertEqual(try server.admin().list().first { $0.userId == "bob" }?.failedAttempts, 0)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testRevokeRefusesTimePermitsAndDeleteForgetsUser() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            var carol = MPinTestClient(http: server.client)
            try await carol.registerFully("carol", pin: "4321")
            let permit = try await carol.timePermit()
            XCTAssertNotNil(permit)
            try server.admin().revoke(userID: "carol")
            let v11 = try await server.client.get("/rps/timePermit/\(carol.mpinIDHex)").status
            XCTAssertEqual(v11, 410)
            // Even with a permit fetched before revocation, authentication is refused.
            let (p2, _) = try await carol.passes(pin: "4321", permit: permit)
            let v12 = try await carol.finalStep(p2)
            XCTAssertEqual(v12, 410)
            // A revoked user cannot register again.
            let v13 = try await server.client.put("/rps/user", RegisterRequest(userId: "carol")).status
            XCTAssertEqual(v13, 403)
            try server.admin().delete(userID: "carol")
            XCTAssertFalse(try server.admin().list().contains { $0.userId == "carol" })
            XCTAssertThrowsError(try server.admin().unblock(userID: "carol"))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testActivationCodeMode() async throws {
        let server = try TestServer(autoActivate: false)
        try await server.start()
        do {
            // Without a code the registration waits for the administrator.
            var dave = MPinTestClient(http: server.client)
            let reg = try await dave.register("dave")
            XCTAssertFalse(reg.active)
            let s = try await server.client.get("/rps/signature/\(dave.mpinIDHex)?regOTT=\(dave.regOTT)")
            XCTAssertEqual(s.status, 401)
            try server.admin().activate(userID: "dave")
            try await dave.confirmAndFinish(pin: "2468")
            let v14 = try await dave.authenticate(pin: "2468")
            XCTAssertEqual(v14, 200)

            // With the one-time code printed by `user add`, active at once; the code is single use.
            let code = try server.admin().add(userID: "erin")
            var erin = MPinTestClient(http: server.client)
            let v15 = try await erin.register("erin", activateCode: "000000000000").active
            XCTAssertFalse(v15)
            let v16 = try await erin.register("erin", activateCode: code).active
            XCTAssertTrue(v16)
            let v17 = try await erin.register("erin", activateCode: code).active
            XCTAssertFalse(v17)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testRestartKeepsUsersCountersAndKeys() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            var frank = MPinTestClient(http: server.client)
            try await frank.registerFully("frank", pin: "1357")
            let v18 = try await frank.authenticate(pin: "0000")
            XCTAssertEqual(v18, 401)
            await server.stop()
            try await server.start()
            frank = frank.using(server.client)
            let v19 = try await frank.authenticate(pin: "0001")
            XCTAssertEqual(v19, 401)
            let v20 = try await frank.authenticate(pin: "0002")
            XCTAssertEqual(v20, 410)  // third failure across the restart
            try server.admin().unblock(userID: "frank")
            let v21 = try await frank.authenticate(pin: "1357")
            XCTAssertEqual(v21, 200)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testAccessNumberFlow() async throws {
        let server = try TestServer { $0.mobileWaitSeconds = 5 }
        try await server.start()
        do {
            var gina = MPinTestClient(http: server.client)
            try await gina.registerFully("gina", pin: "9999")
            let an = try await server.client.send("POST", "/rps/getAccessNumber").decode(AccessNumberResponse.self)
            XCTAssertTrue(AccessNumber.isValid(an.accessNumber))
            XCTAssertEqual(an.localTimeEnd - an.localTimeStart, Int64(an.ttlSeconds) * 1000)
            // Before the mobile authenticates, the browser's poll gets 401.
            let v22 = try await server.client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT)).status
            XCTAssertEqual(v22, 401)

            // A wrong access number: pass 2 still 200, then 412 without counting a wrong PIN.
            let (bad, _) = try await gina.passes(pin: "0000", wid: "6419791")
            let badResult = try await server.client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(bad)))
            XCTAssertEqual(badResult.status, 412)
            XCTAssertEqual(try server.admin().list().first { $0.userId == "gina" }?.failedAttempts, 0)

            let (p2, _) = try await gina.passes(pin: "9999", wid: an.accessNumber)
            let client = server.client!
            let mobile = Task { try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2))) }
            // The browser polls until the mobile succeeded, then completes the login at the RPA.
            var authOTT: String? = nil
            for _ in 0..<50 where authOTT == nil {
                let poll = try await client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT))
                if poll.status == 200 { authOTT = try poll.decode(AccessNumberPollResponse.self).authOTT }
                else { try await Task.sleep(nanoseconds: 100_000_000) }
            }
            let ott = try XCTUnwrap(authOTT)
            let v23 = try await client.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(authOTT: ott))).status
            XCTAssertEqual(v23, 200)
            let result = try await mobile.value
            XCTAssertEqual(result.status, 200, String(decoding: result.body, as: UTF8.self))
            let logout = try result.decode(MobileAuthenticateResponse.self)
            XCTAssertEqual(logout.logoutURL, "/logout")
            XCTAssertEqual(logout.logoutData.userId, "gina")
            let v24 = try await client.post("/logout", logout.logoutData).status
            XCTAssertEqual(v24, 200)
            let v25 = try await client.post("/logout", logout.logoutData).status
            XCTAssertEqual(v25, 400)  // session already ended
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
