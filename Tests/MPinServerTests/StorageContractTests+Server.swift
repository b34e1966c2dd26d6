import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

// The server storage contract (Storage/Contract/ServerStorage.swift): registration, the final
// step of a login, and the expiry of short-lived records.
extension StorageContractTests {
    func testRegistrationLifecycle() async throws {
        try await store.healthCheck()
        let ann = mpinID("ann-1")
        let none = try await store.registrationMatches(mpinID: ann, regOTTHash: "ott", now: now)
        XCTAssertNil(none)
        let details = RegistrationDetails(deviceName: "laptop\u{7}", source: "192.0.2.7")
        let saved = try await store.saveRegistration(
            mpinID: ann, userID: "ann", regOTTHash: "ott", activateKeyHash: "key", expires: now.addingTimeInterval(hour),
            mode: .link, activateCodeHash: nil, regCodeHash: nil, details: details, now: now)
        XCTAssertEqual(saved, .stored(active: false))
        let matches = try await store.registrationMatches(mpinID: ann, regOTTHash: "ott", now: now)
        let mismatch = try await store.registrationMatches(mpinID: ann, regOTTHash: "other", now: now)
        let later = try await store.registrationMatches(mpinID: ann, regOTTHash: "ott", now: now.addingTimeInterval(2 * hour))
        XCTAssertEqual(matches, true)
        XCTAssertEqual(mismatch, false)
        XCTAssertNil(later, "expired")

        let pending = try await store.pendingRegistrations(userID: "ann", now: now)
        XCTAssertEqual(pending.count, 1)
        XCTAssertEqual(pending.first?.fingerprint, fingerprint(ann))
        XCTAssertEqual(pending.first?.deviceName, "laptop", "control characters are not kept")
        XCTAssertEqual(pending.first?.source, "192.0.2.7")
        XCTAssertEqual(pending.first?.active, false)

        let wrongOTT = try await store.consumeRegistration(mpinID: ann, regOTTHash: "other", now: now)
        XCTAssertEqual(wrongOTT, .regOTTMismatch)
        let notYet = try await store.consumeRegistration(mpinID: ann, regOTTHash: "ott", now: now)
        XCTAssertEqual(notYet, .notActive)
        let wrongKey = try await store.activateRegistration(mpinID: ann, activateKeyHash: "other", now: now)
        XCTAssertFalse(wrongKey)
        let activated = try await store.activateRegistration(mpinID: ann, activateKeyHash: "key", now: now)
        XCTAssertTrue(activated)
        let issued = try await store.consumeRegistration(mpinID: ann, regOTTHash: "ott", now: now)
        XCTAssertEqual(issued, .issued(userID: "ann"))
        let again = try await store.consumeRegistration(mpinID: ann, regOTTHash: "ott", now: now)
        XCTAssertEqual(again, .notFound, "consumed once")
        let permit = try await store.permitStatus(mpinID: ann)
        let unknownPermit = try await store.permitStatus(mpinID: mpinID("nobody"))
        XCTAssertEqual(permit, .allowed)
        XCTAssertEqual(unknownPermit, .revoked)

        // The activation code of `user add` activates a `.code` registration.
        try await store.addUser(userID: "bea", activationCodeHash: "code-hash", now: now)
        let wrongCode = try await store.saveRegistration(
            mpinID: mpinID("bea-1"), userID: "bea", regOTTHash: "ott-b", activateKeyHash: "key-b", expires: now.addingTimeInterval(hour),
            mode: .code, activateCodeHash: "other", regCodeHash: nil, details: details, now: now)
        XCTAssertEqual(wrongCode, .activationCodeRefused, "a wrong activation code stores nothing (docs/SECURITY.md §5)")
        let rightCode = try await store.saveRegistration(
            mpinID: mpinID("bea-2"), userID: "bea", regOTTHash: "ott-b2", activateKeyHash: "key-b2", expires: now.addingTimeInterval(hour),
            mode: .code, activateCodeHash: "code-hash", regCodeHash: nil, details: details, now: now)
        XCTAssertEqual(rightCode, .stored(active: true))

        // A revoked user registers nothing and gets no permits.
        let revoked = try await store.changeUser(userID: "ann", .revoke)
        XCTAssertTrue(revoked)
        let refused = try await store.saveRegistration(
            mpinID: mpinID("ann-2"), userID: "ann", regOTTHash: "ott2", activateKeyHash: "key2", expires: now.addingTimeInterval(hour),
            mode: .auto, activateCodeHash: nil, regCodeHash: nil, details: details, now: now)
        XCTAssertEqual(refused, .refused)
        let revokedPermit = try await store.permitStatus(mpinID: ann)
        XCTAssertEqual(revokedPermit, .revoked)
        // `user add` makes a revoked user pending again, with a new activation code.
        try await store.addUser(userID: "ann", activationCodeHash: "new-code", now: now)
        let readded = try await store.listUsers(maxAttempts: 3).first { $0.userId == "ann" }
        XCTAssertEqual(readded?.state, "pending")
        XCTAssertEqual(readded?.identities, 0, "revoking deleted the identities")
        let withNewCode = try await store.saveRegistration(
            mpinID: mpinID("ann-3"), userID: "ann", regOTTHash: "ott3", activateKeyHash: "key3", expires: now.addingTimeInterval(hour),
            mode: .code, activateCodeHash: "new-code", regCodeHash: nil, details: details, now: now)
        XCTAssertEqual(withNewCode, .stored(active: true))
    }

    /// A storage opened for a command runs its own connections (PostgreSQL's pool): nothing
    /// for the server's service group.
    func testOpenedForACommandNeedsNoService() async throws {
        try await store.healthCheck()
        XCTAssertNil(store.service)
    }

    // MARK: Authentication

    /// Every verdict of a direct login's final step uses its record up, whatever the plan writes
    /// besides: nothing (a right PIN on a clean counter, an identity revoked after pass 2, none
    /// at all), a session, a counted wrong PIN.
    func testEveryDirectFinalStepUsesItsRecordOnce() async throws {
        let ux = try await issueIdentity("ux-1", user: "ux")
        let gone = try await issueIdentity("ux-gone", user: "ux-gone")
        let session = NewSession(token: "ux-token", tokenHash: "ux-token-hash", expires: now.addingTimeInterval(hour))
        assertTrue(try await savePass2("ux-revoked", mpinID: gone, success: true))
        assertTrue(try await store.changeUser(userID: "ux-gone", .revoke))
        let cases: [(hash: String, mpinID: String, success: Bool, session: NewSession?, status: Int)] = [
            ("ux-plain", ux, true, nil, 200), ("ux-session", ux, true, session, 200), ("ux-wrong", ux, false, nil, 401),
            ("ux-right-again", ux, true, nil, 200), ("ux-unknown", mpinID("ux-none"), true, nil, 401),
        ]
        for c in cases { assertTrue(try await savePass2(c.hash, mpinID: c.mpinID, success: c.success), c.hash) }
        for c in cases + [("ux-revoked", gone, true, nil, 401)] {
            let first = try await store.evaluate(authOTTHash: c.hash, flow: .direct, maxAttempts: 3, now: now,
                                                 session: c.session, logoutData: nil)
            XCTAssertEqual(first?.status, c.status, c.hash)
            let again = try await store.evaluate(authOTTHash: c.hash, flow: .direct, maxAttempts: 3, now: now,
                                                 session: c.session, logoutData: nil)
            XCTAssertNil(again, "\(c.hash): used twice")
        }
        let counter = try await store.identities(userID: "ux").first?.failedAttempts
        XCTAssertEqual(counter, 0, "the right PIN after the wrong one reset the counter")
        let opened = try await store.endSession(tokenHash: "ux-token-hash", userID: "ux", now: now)
        XCTAssertTrue(opened)
    }

    /// What changed between a login's pass 2 and its final step decides the verdict: on
    /// PostgreSQL the node that stored the pass-2 result keeps a copy of it with the identity as
    /// it stood then, and must not answer from that copy once the identity has changed.
    func testFinalStepSeesIdentityChangesAfterPass2() async throws {
        let hy = try await issueIdentity("hy-1", user: "hy")
        // A wrong PIN counted after a right PIN's pass 2: the right PIN still resets the counter.
        assertTrue(try await savePass2("hy-right", mpinID: hy, success: true))
        assertTrue(try await savePass2("hy-wrong", mpinID: hy, success: false))
        let wrong = try await store.evaluate(authOTTHash: "hy-wrong", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(wrong?.status, 401)
        let session = NewSession(token: "hy-token", tokenHash: "hy-token-hash", expires: now.addingTimeInterval(hour))
        let right = try await store.evaluate(authOTTHash: "hy-right", flow: .direct, maxAttempts: 3, now: now,
                                             session: session, logoutData: nil)
        XCTAssertEqual(right?.status, 200)
        let reset = try await store.identities(userID: "hy")
        XCTAssertEqual(reset.first?.failedAttempts, 0, "the right PIN reset the counter counted after its pass 2")
        let opened = try await store.endSession(tokenHash: "hy-token-hash", userID: "hy", now: now)
        XCTAssertTrue(opened)

        // Blocked at pass 2, unblocked by the administrator before the final step: accepted.
        for i in 0..<3 {
            assertTrue(try await savePass2("hy-block-\(i)", mpinID: hy, success: false))
            _ = try await store.evaluate(authOTTHash: "hy-block-\(i)", flow: .direct, maxAttempts: 3, now: now)
        }
        assertTrue(try await savePass2("hy-while-blocked", mpinID: hy, success: true))
        assertTrue(try await store.unblockIdentity(userID: "hy", mpinID: hy))
        let unblocked = try await store.evaluate(authOTTHash: "hy-while-blocked", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(unblocked?.status, 200, "unblocked after pass 2")

        // Revoked after pass 2 (its identities deleted): refused, and the record used up.
        assertTrue(try await savePass2("hy-revoked", mpinID: hy, success: true))
        assertTrue(try await store.changeUser(userID: "hy", .revoke))
        let revoked = try await store.evaluate(authOTTHash: "hy-revoked", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(revoked?.status, 401, "revoked after pass 2: no such identity any more")
        let again = try await store.evaluate(authOTTHash: "hy-revoked", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertNil(again, "single use")
    }

    func testDirectFinalStepCountsWrongPINsAndBlocks() async throws {
        let cy = try await issueIdentity("cy-1", user: "cy")
        var statuses: [Int] = []
        var left: [Int?] = []
        for i in 0..<3 {
            assertTrue(try await savePass2("wrong-\(i)", mpinID: cy, success: false))
            let verdict = try await store.evaluate(authOTTHash: "wrong-\(i)", flow: .direct, maxAttempts: 3, now: now)
            statuses.append(try XCTUnwrap(verdict).status)
            left.append(verdict?.attemptsLeft)
            XCTAssertEqual(verdict?.blockedNow, i == 2)
        }
        XCTAssertEqual(statuses, [401, 401, 410])
        // The count a host shows comes from the counter the verdict wrote, on each backend.
        XCTAssertEqual(left, [2, 1, nil])
        let used = try await store.evaluate(authOTTHash: "wrong-0", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertNil(used, "single use")
        assertTrue(try await savePass2("right", mpinID: cy, success: true))
        let blocked = try await store.evaluate(authOTTHash: "right", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(blocked?.status, 410, "a blocked identity's right PIN is refused")
        let counted = try await store.identities(userID: "cy")
        XCTAssertEqual(counted.first?.failedAttempts, 3)
        let listed = try await store.listUsers(maxAttempts: 3)
        XCTAssertEqual(listed.first?.blocked, true)

        let unblocked = try await store.unblockIdentity(userID: "cy", mpinID: cy)
        let nobody = try await store.unblockIdentity(userID: "cy", mpinID: mpinID("other"))
        XCTAssertTrue(unblocked)
        XCTAssertFalse(nobody)
        assertTrue(try await savePass2("right-2", mpinID: cy, success: true))
        let session = NewSession(token: "token", tokenHash: "token-hash", expires: now.addingTimeInterval(hour))
        let accepted = try await store.evaluate(authOTTHash: "right-2", flow: .direct, maxAttempts: 3, now: now,
                                                session: session, logoutData: nil)
        XCTAssertEqual(accepted?.status, 200)
        XCTAssertEqual(accepted?.userID, "cy")
        XCTAssertEqual(accepted?.mpinID, cy)
        // The 200 that opened a session used the record up too (one statement on PostgreSQL).
        let replayed = try await store.evaluate(authOTTHash: "right-2", flow: .direct, maxAttempts: 3, now: now,
                                                session: NewSession(token: "t2", tokenHash: "token-hash-2",
                                                                    expires: now.addingTimeInterval(hour)), logoutData: nil)
        XCTAssertNil(replayed, "single use")
        let wrongUser = try await store.endSession(tokenHash: "token-hash", userID: "eve", now: now)
        let ended = try await store.endSession(tokenHash: "token-hash", userID: "cy", now: now)
        let twice = try await store.endSession(tokenHash: "token-hash", userID: "cy", now: now)
        XCTAssertFalse(wrongUser)
        XCTAssertTrue(ended, "the 200 opened the session")
        XCTAssertFalse(twice)

        // The administrator's unblock of the whole user clears the counter too.
        for i in 0..<3 {
            assertTrue(try await savePass2("again-\(i)", mpinID: cy, success: false))
            _ = try await store.evaluate(authOTTHash: "again-\(i)", flow: .direct, maxAttempts: 3, now: now)
        }
        let cleared = try await store.changeUser(userID: "cy", .unblock)
        XCTAssertTrue(cleared)
        let afterUnblock = try await store.identities(userID: "cy")
        XCTAssertEqual(afterUnblock.first?.failedAttempts, 0)
        let unknown = try await savePass2("ghost", mpinID: mpinID("ghost"), success: true)
        XCTAssertTrue(unknown)
        let ghost = try await store.evaluate(authOTTHash: "ghost", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(ghost?.status, 401, "no such identity")
    }

    func testAccessNumberLogin() async throws {
        let dee = try await issueIdentity("dee-1", user: "dee")
        let expires = now.addingTimeInterval(120)
        let created = try await store.createAccessNumber(wid: "1234567", webOTTHash: "web-1", expires: expires, now: now,
                                                         description: "ssh dee@host")
        let taken = try await store.createAccessNumber(wid: "1234567", webOTTHash: "web-2", expires: expires, now: now,
                                                       description: "other")
        XCTAssertTrue(created)
        XCTAssertFalse(taken)
        let description = try await store.accessNumberDescription(wid: "1234567", now: now)
        XCTAssertEqual(description?.description, "ssh dee@host")
        XCTAssertEqual(description?.expires.timeIntervalSince1970 ?? 0, expires.timeIntervalSince1970, accuracy: 0.001)
        let requester = try await store.accessNumberRequester(wid: "1234567")
        XCTAssertEqual(requester?.webOTTHash, "web-1")
        XCTAssertEqual(requester?.description, "ssh dee@host")
        let notWeb = try await store.webLogin(accessNumber: "1234567", now: now)
        XCTAssertNil(notWeb, "a device login's number")
        let noneYet = try await store.pollAccessNumber(webOTTHash: "web-1", now: now)
        XCTAssertNil(noneYet)

        let deadNumber = try await savePass2("p-dead", mpinID: dee, success: true, wid: "7777777")
        XCTAssertFalse(deadNumber, "no such access number")
        assertTrue(try await savePass2("p-1", mpinID: dee, success: true, wid: "1234567"))
        let code = NewAuthorizationCode(code: "unused", codeHash: "unused-hash", expires: expires)
        let mobile = try await store.evaluate(authOTTHash: "p-1", flow: .mobile(authOTT: "ott-1", code: code), maxAttempts: 3, now: now)
        XCTAssertEqual(mobile?.status, 200)
        XCTAssertEqual(mobile?.isReport, false)
        let polled = try await store.pollAccessNumber(webOTTHash: "web-1", now: now)
        XCTAssertEqual(polled, "ott-1")
        let approved = try await store.accessNumberDescription(wid: "1234567", now: now)
        XCTAssertNil(approved, "approved already")

        let notReady = try await store.browserReady(authOTTHash: "p-1")
        XCTAssertFalse(notReady)
        let session = NewSession(token: "browser-token", tokenHash: "browser-hash", expires: now.addingTimeInterval(hour))
        let browser = try await store.evaluate(authOTTHash: "p-1", flow: .direct, maxAttempts: 3, now: now,
                                               session: session, logoutData: nil)
        XCTAssertEqual(browser?.status, 200)
        XCTAssertEqual(browser?.isReport, true)
        XCTAssertEqual(browser?.wid, "1234567")
        let replay = try await store.evaluate(authOTTHash: "p-1", flow: .direct, maxAttempts: 3, now: now,
                                              session: session, logoutData: nil)
        XCTAssertNil(replay, "the browser's step is used once")
        let ready = try await store.browserReady(authOTTHash: "p-1")
        XCTAssertTrue(ready)
        let logout = try await store.finishMobile(authOTTHash: "p-1")
        XCTAssertEqual(logout?.userID, "dee")
        XCTAssertEqual(logout?.token, "browser-token")
        let finished = try await store.finishMobile(authOTTHash: "p-1")
        XCTAssertNil(finished)
        let numberGone = try await store.accessNumberRequester(wid: "1234567")
        XCTAssertNil(numberGone, "finishing deletes the access number")

        // The browser's step of an RPA that keeps its own session hands its logout data over.
        assertTrue(try await store.createAccessNumber(wid: "2345678", webOTTHash: "web-3", expires: expires, now: now, description: ""))
        assertTrue(try await savePass2("p-2", mpinID: dee, success: true, wid: "2345678"))
        let second = try await store.evaluate(authOTTHash: "p-2", flow: .mobile(authOTT: "ott-2", code: code), maxAttempts: 3, now: now)
        XCTAssertEqual(second?.status, 200)
        let reported = try await store.evaluate(authOTTHash: "p-2", flow: .direct, maxAttempts: 3, now: now, session: nil,
                                                logoutData: LogoutData(userId: "dee", sessionToken: "rpa-token"))
        XCTAssertEqual(reported?.status, 200)
        let handedOver = try await store.finishMobile(authOTTHash: "p-2")
        XCTAssertEqual(handedOver?.token, "rpa-token")

        // A web login's access number stands for its access code (MFA.md §5.4).
        assertTrue(try await store.createAccessNumber(wid: "7654321", webOTTHash: "ac:code-hash", expires: expires, now: now,
                                                         description: "web login"))
        let web = try await store.webLogin(accessNumber: "7654321", now: now)
        XCTAssertEqual(web, "ac:code-hash")
        let webDescription = try await store.webLoginDescription(accessCodeHash: "code-hash", now: now)
        XCTAssertEqual(webDescription, "web login")
        let expired = try await store.webLogin(accessNumber: "7654321", now: expires)
        XCTAssertNil(expired)
    }

    // MARK: Expiry

    func testPurgeExpiredDeletesOnlyExpiredRecords() async throws {
        let soon = now.addingTimeInterval(10), later = now.addingTimeInterval(hour)
        assertTrue(try await store.issueDVSToken(tokenHash: "old", userID: "lu", expires: soon))
        assertTrue(try await store.issueDVSToken(tokenHash: "new", userID: "lu", expires: later))
        assertTrue(try await store.createAccessNumber(wid: "1111111", webOTTHash: "w-old", expires: soon, now: now, description: ""))
        assertTrue(try await store.issueRegCode(codeHash: "rc-old", userID: "lu", expires: soon, now: now))
        try await store.purgeExpired(now: now.addingTimeInterval(11))
        // Asked as of `now`, before they expire: only a purge can have removed them.
        let oldToken = try await store.dvsTokenUser(tokenHash: "old", now: now)
        let newToken = try await store.dvsTokenUser(tokenHash: "new", now: now)
        XCTAssertNil(oldToken)
        XCTAssertEqual(newToken, "lu")
        let free = try await store.createAccessNumber(wid: "1111111", webOTTHash: "w-again", expires: later, now: now, description: "")
        XCTAssertTrue(free, "the purged number is free again")
        let oldCode = try await registerWithCode("lu-1", user: "lu", codeHash: "rc-old")
        XCTAssertEqual(oldCode, .regCodeRefused(wrongCodes: 0))
    }
}
