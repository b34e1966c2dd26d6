import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// Registration and authentication over real HTTP with MPinCrypto as the client.
class EndToEndTests: XCTestCase {
    /// The database the tests run on (`PostgresStorageTests.swift` runs them on PostgreSQL).
    class var storage: TestStorage { .sqlite }

    func testRegisterAuthenticateOTPAndReplays() async throws {
        let server = try await TestServer(storage: Self.storage)
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
        let server = try await TestServer(storage: Self.storage)
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
            let listed = try await server.user("bob")
            XCTAssertEqual(listed?.blocked, true)
            try await server.admin().unblock(userID: "bob")
            let v10 = try await bob.authenticate(pin: "1234")
            XCTAssertEqual(v10, 200)
            let bobAfter = try await server.user("bob")
            XCTAssertEqual(bobAfter?.failedAttempts, 0)

            // docs/SECURITY.md §6.13: with two devices blocked (say, bob's and a thief's copy of
            // another token), unblock names one; the other stays blocked.
            var laptop = MPinTestClient(http: server.client)
            try await laptop.registerFully("bob", pin: "5678")
            for client in [bob, laptop] {
                for pin in ["0000", "0001", "0002"] { _ = try await client.authenticate(pin: pin) }
            }
            let identities = try await server.admin().identities(userID: "bob")
            XCTAssertEqual(identities.map(\.blocked), [true, true])
            do {
                try await server.admin().unblock(userID: "bob")
                XCTFail("a bare unblock with two blocked identities must be refused")
            } catch let e as AdminError {
                guard case .identityNotNamed(_, 2) = e else { return XCTFail("\(e)") }
            }
            let fingerprint = Hex.encode(MPin.hashID(laptop.mpinID))
            try await server.admin().unblock(userID: "bob", identity: String(fingerprint.prefix(10)))
            let laptopAgain = try await laptop.authenticate(pin: "5678")
            XCTAssertEqual(laptopAgain, 200, "the named identity is unblocked")
            let bobStill = try await bob.authenticate(pin: "1234")
            XCTAssertEqual(bobStill, 410, "the other stays blocked")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testRevokeRefusesTimePermitsAndDeleteForgetsUser() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var carol = MPinTestClient(http: server.client)
            try await carol.registerFully("carol", pin: "4321")
            let permit = try await carol.timePermit()
            XCTAssertNotNil(permit)
            try await server.admin().revoke(userID: "carol")
            let v11 = try await server.client.get("/rps/timePermit/\(carol.mpinIDHex)").status
            XCTAssertEqual(v11, 410)
            // Even with a permit fetched before revocation, authentication is refused: the
            // revocation deleted the identity (its token is worthless from now on), which the
            // final step answers as for any identity never issued.
            let (p2, _) = try await carol.passes(pin: "4321", permit: permit)
            let v12 = try await carol.finalStep(p2)
            XCTAssertEqual(v12, 401)
            // Made pending again with `user add`, carol must enrol afresh: the old token stays dead.
            _ = try await server.admin().add(userID: "carol")
            let (again, _) = try await carol.passes(pin: "4321", permit: permit)
            let afterAdd = try await carol.finalStep(again)
            XCTAssertEqual(afterAdd, 401, "user add must not bring a revoked identity back")
            try await server.admin().revoke(userID: "carol")
            // A revoked user cannot register again.
            let v13 = try await server.client.put("/rps/user", RegisterRequest(userId: "carol")).status
            XCTAssertEqual(v13, 403)
            try await server.admin().delete(userID: "carol")
            let carolAfter = try await server.user("carol")
            XCTAssertNil(carolAfter)
            do {
                try await server.admin().unblock(userID: "carol")
                XCTFail("unblocking a deleted user succeeded")
            } catch {}
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testActivationCodeMode() async throws {
        let server = try await TestServer(autoActivate: false, storage: Self.storage)
        try await server.start()
        do {
            // Without a code the registration waits for the administrator.
            var dave = MPinTestClient(http: server.client)
            let reg = try await dave.register("dave")
            XCTAssertFalse(reg.active)
            let s = try await server.client.get("/rps/signature/\(dave.mpinIDHex)?regOTT=\(dave.regOTT)")
            XCTAssertEqual(s.status, 401)
            // docs/SECURITY.md §6.2: somebody else starts a registration for dave too; a bare
            // activation is refused, and naming dave's activates his and only his.
            var mallory = MPinTestClient(http: server.client)
            _ = try await mallory.register("dave")
            let pending = try await server.admin().pending(userID: "dave")
            XCTAssertEqual(pending.count, 2)
            do {
                try await server.admin().activate(userID: "dave")
                XCTFail("a bare activation with pending registrations must be refused")
            } catch let e as AdminError {
                guard case .registrationNotNamed(_, let listed) = e else { return XCTFail("\(e)") }
                XCTAssertEqual(listed.count, 2)
            }
            let fingerprint = Hex.encode(MPin.hashID(dave.mpinID))
            XCTAssertTrue(pending.contains { $0.fingerprint == fingerprint })
            try await server.admin().activate(userID: "dave", registration: String(fingerprint.prefix(12)))
            let refused = try await server.client.get("/rps/signature/\(mallory.mpinIDHex)?regOTT=\(mallory.regOTT)")
            XCTAssertEqual(refused.status, 401, "the other registration stays inactive")
            try await dave.confirmAndFinish(pin: "2468")
            let v14 = try await dave.authenticate(pin: "2468")
            XCTAssertEqual(v14, 200)

            // With the one-time code printed by `user add`, active at once; the code is single use.
            let code = try await server.admin().add(userID: "erin")
            var erin = MPinTestClient(http: server.client)
            let v15 = try await server.client.put("/rps/user", RegisterRequest(userId: "erin", mobile: 1, activateCode: "000000000000"))
            XCTAssertEqual(v15.status, 403, "a wrong activation code stores nothing (docs/SECURITY.md §5)")
            let v16 = try await erin.register("erin", activateCode: code).active
            XCTAssertTrue(v16)
            let v17 = try await server.client.put("/rps/user", RegisterRequest(userId: "erin", mobile: 1, activateCode: code))
            XCTAssertEqual(v17.status, 403, "the code is single use; used, it is wrong")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// Activation links are secrets: a spool file that others may read (made so before the
    /// server opens it) is refused, the registration fails, and nothing is appended to it.
    func testActivationLinkSpoolThatOthersCanReadIsRefused() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.verification = .link }
        try await server.start()
        do {
            let spoolPath = server.dataDir + "/mail.spool"
            XCTAssertTrue(FileManager.default.createFile(atPath: spoolPath, contents: Data(),
                                                         attributes: [.posixPermissions: 0o644]))
            let r = try await server.client.put("/rps/user", RegisterRequest(userId: "mia@example.com", mobile: 1, activateCode: nil))
            XCTAssertNotEqual(r.status, 200, "a registration whose link cannot be kept secret does not go ahead")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: spoolPath)).count, 0, "no link written")
            // Mode 0600 again: the next registration's link is written.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: spoolPath)
            let again = try await server.client.put("/rps/user", RegisterRequest(userId: "mia@example.com", mobile: 1, activateCode: nil))
            XCTAssertEqual(again.status, 200)
            XCTAssertTrue(try String(contentsOfFile: spoolPath, encoding: .utf8).contains("mia@example.com"))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testActivationLinkMode() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.verification = .link }
        try await server.start()
        do {
            var lena = MPinTestClient(http: server.client)
            let v1 = try await lena.register("lena@example.com")
            XCTAssertFalse(v1.active)
            let spoolPath = server.dataDir + "/mail.spool"
            let attrs = try FileManager.default.attributesOfItem(atPath: spoolPath)
            XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o600)
            let line = try XCTUnwrap(String(contentsOfFile: spoolPath, encoding: .utf8).split(separator: "\n").last)
            let message = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
            XCTAssertEqual(message["to"], "lena@example.com")
            // Which registration the link is for, as the user's screen shows it while waiting.
            XCTAssertEqual(message["registration"], Hex.encode(MPin.hashID(lena.mpinID)))
            XCTAssertNotNil(message["from"])
            let link = try XCTUnwrap(message["link"])
            XCTAssertTrue(link.hasPrefix("/mpinActivate?"))
            // Not active until the link is opened; a forged link does nothing.
            let early = try await server.client.get("/rps/signature/\(lena.mpinIDHex)?regOTT=\(lena.regOTT)")
            XCTAssertEqual(early.status, 401)
            let forged = try await server.client.send("POST", "/mpinActivate?i=\(lena.mpinIDHex)&s=" + String(repeating: "ab", count: 32))
            XCTAssertEqual(forged.status, 401)
            // Opening the link (a mail scanner, a link preview, the person) only shows what it
            // would activate: who, and the fingerprint the registering screen shows.
            let opened = try await server.client.get(link)
            XCTAssertEqual(opened.status, 200)
            XCTAssertEqual(opened.headers["content-type"], "text/html; charset=utf-8")
            XCTAssertEqual(opened.headers["cache-control"], "no-store")
            XCTAssertTrue(opened.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
            let page = String(decoding: opened.body, as: UTF8.self)
            XCTAssertTrue(page.contains("lena@example.com"), page)
            XCTAssertTrue(page.contains(String(Hex.encode(MPin.hashID(lena.mpinID)).prefix(16))), page)
            XCTAssertTrue(page.contains("<form method=\"post\""), page)
            // A crafted link cannot put markup on the page: the query goes back escaped.
            let crafted = try await server.client.get(link + "&x=%22%3E%3Cscript%3Ealert(1)%3C/script%3E")
            let craftedPage = String(decoding: crafted.body, as: UTF8.self)
            XCTAssertFalse(craftedPage.contains("<script"), craftedPage)
            XCTAssertTrue(craftedPage.contains("&lt;script") || craftedPage.contains("%3Cscript"), craftedPage)
            let stillInactive = try await server.client.get("/rps/signature/\(lena.mpinIDHex)?regOTT=\(lena.regOTT)")
            XCTAssertEqual(stillInactive.status, 401, "a GET of the link activates nothing")
            // The page's button: a POST of the same link, from a browser.
            let pressed = try await server.client.send("POST", link, headers: ["Accept": "text/html"])
            XCTAssertEqual(pressed.status, 200)
            XCTAssertTrue(String(decoding: pressed.body, as: UTF8.self).contains("Registration activated"))
            try await lena.confirmAndFinish(pin: "8080")
            let v2 = try await lena.authenticate(pin: "8080")
            XCTAssertEqual(v2, 200)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// `mpin-server user invite` (self-enrolment, pam_mpin(8), OPTIONS): the code registers its own
    /// identity at once, in `code` verification mode, and no other; wrong codes tried for an
    /// identity void none of its codes (docs/SECURITY.md §5); a lifetime out of range is refused.
    func testInvitationCodesAndWrongCodeCounting() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.verification = .code }
        try await server.start()
        do {
            let admin = try await server.admin()
            func register(_ user: String, _ code: String) async throws -> HTTPResult {
                try await server.client.put("/rps/user", RegisterRequest(userId: user, mobile: 1, regCode: code))
            }
            let ivy = try await admin.invite(userID: "ivy@example.com", ttlSeconds: 3600)
            XCTAssertEqual(ivy.utf8.count, 12)
            let other = try await register("jan@example.com", ivy)
            XCTAssertEqual(other.status, 403, "a code registers only the identity it was issued to")
            for guess in ["111111111111", "222222222222"] {
                let wrong = try await register("ivy@example.com", guess)
                XCTAssertEqual(wrong.status, 403)
            }
            let right = try await register("ivy@example.com", ivy)
            XCTAssertEqual(right.status, 200, String(decoding: right.body, as: UTF8.self))
            XCTAssertTrue(try right.decode(RegisterResponse.self).active, "active at once, without the admin")
            let again = try await register("ivy@example.com", ivy)
            XCTAssertEqual(again.status, 403, "single use")

            let jan = try await admin.invite(userID: "jan@example.com", ttlSeconds: 3600)
            for guess in ["111111111111", "222222222222", "333333333333"] {
                let wrong = try await register("jan@example.com", guess)
                XCTAssertEqual(wrong.status, 403)
            }
            let kept = try await register("jan@example.com", jan)
            XCTAssertEqual(kept.status, 200, "wrong codes for jan void no invitation (docs/SECURITY.md §5)")

            do {
                _ = try await admin.invite(userID: "kim@example.com", ttlSeconds: 59)
                XCTFail("a lifetime under a minute is refused")
            } catch let error as AdminError {
                XCTAssertEqual(error, .inviteLifetime(59))
            }
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testExpiredPass1IsRejected() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.pass1ExpireSeconds = 0 }
        try await server.start()
        do {
            var mia = MPinTestClient(http: server.client)
            try await mia.registerFully("mia", pin: "1234")
            let tp = try await mia.timePermit()!
            let x = try SystemRandom.scalar()
            let c1 = try MPin.client1(date: tp.date, mpinID: mia.mpinID, x: x, pin: MPinTestClient.pinValue("1234"),
                                      token: mia.token, timePermit: tp.permit)
            let p1 = try await server.client.post("/rps/pass1", Pass1Request(mpinId: mia.mpinIDHex, ut: Hex.encode(c1.ut!), u: Hex.encode(c1.u)))
            let y = Hex.decode(try p1.decode(Pass1Response.self).y)!
            let v = try MPin.client2(x: x, y: y, sec: c1.sec)
            let p2 = try await server.client.post("/rps/pass2", Pass2Request(mpinId: mia.mpinIDHex, v: Hex.encode(v)))
            XCTAssertEqual(p2.status, 403)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testExpiredAuthOTTIsRejectedWithoutCounting() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.authOTTExpireSeconds = 0 }
        try await server.start()
        do {
            var nia = MPinTestClient(http: server.client)
            try await nia.registerFully("nia", pin: "4321")
            let (right, _) = try await nia.passes(pin: "4321")
            let v1 = try await nia.finalStep(right)
            XCTAssertEqual(v1, 408, "an authOTT past its lifetime is refused even for the right PIN")
            let (wrong, _) = try await nia.passes(pin: "0000")
            let v2 = try await nia.finalStep(wrong)
            XCTAssertEqual(v2, 408)
            let niaAfter = try await server.user("nia")
            XCTAssertEqual(niaAfter?.failedAttempts, 0)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testOverlongMpinIDIsRefused() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            let long = String(repeating: "ab", count: 1025)
            let p1 = try await server.client.post("/rps/pass1", Pass1Request(mpinId: long, ut: "04", u: "04"))
            XCTAssertEqual(p1.status, 403)
            let p2 = try await server.client.post("/rps/pass2", Pass2Request(mpinId: long, v: "04"))
            XCTAssertEqual(p2.status, 403)
            var pia = MPinTestClient(http: server.client)
            try await pia.registerFully("pia", pin: "1357")
            // Wrong, right, right: the identity hashes cached after the first success serve the next.
            let results = [try await pia.authenticate(pin: "0000"), try await pia.authenticate(pin: "1357"),
                           try await pia.authenticate(pin: "1357")]
            XCTAssertEqual(results, [401, 200, 200])
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testRestartedRegistrationAcceptsEitherHexCaseAndRefusesOverlongIdentities() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var rae = MPinTestClient(http: server.client)
            let first = try await rae.register("rae")
            let again = try await server.client.put("/rps/user/\(first.mpinId.uppercased())",
                                                    RegisterRequest(userId: "rae", regOTT: first.regOTT.uppercased()))
            XCTAssertEqual(again.status, 200, String(decoding: again.body, as: UTF8.self))
            XCTAssertEqual(try again.decode(RegisterResponse.self).mpinId, first.mpinId, "the same registration continues")
            // 256 control characters are escaped to 6 bytes each: an mpinId pass 1 would refuse.
            let odd = String(repeating: "\u{1}", count: 256)
            let refused = try await server.client.put("/rps/user", RegisterRequest(userId: odd))
            XCTAssertEqual(refused.status, 400)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testOutOfRangeSettingsAreRefusedAtStart() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.authOTTExpireSeconds = Int.max / 2 }
        do {
            try await server.start()
            XCTFail("a server started with authOTTExpireSeconds = Int.max / 2")
            await server.stop()
        } catch let error as SetupError {
            XCTAssertEqual(error, .invalidSetting(server.dataDir + "/config.json", "authOTTExpireSeconds"))
        }
        await server.shutdown()
    }

    func testExpiredAccessNumberIsRefused() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.accessNumberExpireSeconds = 0; $0.accessNumberExtendValiditySeconds = 0 }
        try await server.start()
        do {
            var olga = MPinTestClient(http: server.client)
            try await olga.registerFully("olga", pin: "2468")
            let an = try await server.client.send("POST", "/rps/getAccessNumber").decode(AccessNumberResponse.self)
            let (p2, _) = try await olga.passes(pin: "2468", wid: an.accessNumber)
            let mobile = try await server.client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2)))
            XCTAssertEqual(mobile.status, 412)
            let poll = try await server.client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT))
            XCTAssertEqual(poll.status, 401)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testRestartKeepsUsersCountersAndKeys() async throws {
        let server = try await TestServer(storage: Self.storage)
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
            try await server.admin().unblock(userID: "frank")
            let v21 = try await frank.authenticate(pin: "1357")
            XCTAssertEqual(v21, 200)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testAccessNumberFlow() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.mobileWaitSeconds = 5 }
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
            let ginaAfter = try await server.user("gina")
            XCTAssertEqual(ginaAfter?.failedAttempts, 0)

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
            // The browser's step is single use: a replay opens no second session.
            let replay = try await client.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(authOTT: ott))).status
            XCTAssertEqual(replay, 408)
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

/// The roles running apart: two D-TAs and an RPS, each its own server, talking HTTP.
final class SeparateRolesTests: XCTestCase {
    func testRPSWithRemoteDTAs() async throws {
        let base = try TestServer()  // only its data directory is used
        var started: [RunningServer] = []
        do {
            let d1 = try await MPinServer(dataDirectory: base.dataDir, port: 0, role: .dta(index: 1),
                                          logger: TestServer.quietLogger).start()
            started.append(d1)
            let d2 = try await MPinServer(dataDirectory: base.dataDir, port: 0, role: .dta(index: 2),
                                          logger: TestServer.quietLogger).start()
            started.append(d2)
            let rps = try await MPinServer(
                dataDirectory: base.dataDir, port: 0,
                role: .rps(dta1URL: "http://127.0.0.1:\(d1.port)/", dta2URL: "http://127.0.0.1:\(d2.port)/"),
                logger: TestServer.quietLogger).start()
            started.append(rps)
            let http = HTTPClient(base: "http://127.0.0.1:\(rps.port)")
            let settings = try await http.get("/rps/clientSettings").decode(ClientSettings.self)
            XCTAssertEqual(settings.certivoxURL, "http://127.0.0.1:\(d2.port)/")
            // The RPS does not serve the D-TA's endpoints; D-TA 2 refuses unsigned requests.
            let notHere = try await http.get("/dta/status")
            XCTAssertEqual(notHere.status, 404)
            let dta2 = HTTPClient(base: "http://127.0.0.1:\(d2.port)")
            let unsigned = try await dta2.get("/clientSecret?app_id=x&expires=2099-01-01T00%3A00%3A00Z&hash_mpin_id=\(String(repeating: "ab", count: 32))&hash_user_id=&signature=00")
            XCTAssertEqual(unsigned.status, 401)

            // Registration: share 1 via the RPS (from D-TA 1), share 2 from D-TA 2 directly.
            var nora = MPinTestClient(http: http)
            _ = try await nora.register("nora")
            let sig = try await http.get("/rps/signature/\(nora.mpinIDHex)?regOTT=\(nora.regOTT)").decode(SignatureResponse.self)
            let c2 = try await dta2.get("/clientSecret?" + sig.params).decode(ClientSecretResponse.self)
            let cs = try MPin.recombineG1(Hex.decode(sig.clientSecretShare)!, Hex.decode(c2.clientSecret)!)
            nora.token = try MPin.extractPIN(mpinID: nora.mpinID, pin: MPinTestClient.pinValue("1111"), clientSecret: cs)
            let tp = try await http.get("/rps/timePermit/\(nora.mpinIDHex)").decode(TimePermitResponse.self)
            let tp2 = try await dta2.get("/timePermit?hash_mpin_id=\(tp.storageId)&app_id=\(settings.appID)&mobile=1&signature=\(tp.signature)")
                .decode(DTATimePermitResponse.self)
            let permit = (Int32(tp.date), try MPin.recombineG1(Hex.decode(tp.timePermit)!, Hex.decode(tp2.timePermit)!))
            let (ok, _) = try await nora.passes(pin: "1111", permit: permit)
            let v1 = try await nora.finalStep(ok)
            XCTAssertEqual(v1, 200)
            let (bad, _) = try await nora.passes(pin: "1112", permit: permit)
            let v2 = try await nora.finalStep(bad)
            XCTAssertEqual(v2, 401)
        } catch {
            for s in started { await s.stop() }
            await base.shutdown()
            throw error
        }
        for s in started { await s.stop() }
        await base.shutdown()
    }
}
