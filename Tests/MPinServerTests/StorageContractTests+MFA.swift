import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

// The MFA storage contract (Storage/Contract/MFAStorage.swift): MFA sessions, authorization
// codes, registration codes.
extension StorageContractTests {
    func testMFASessionIssuesAuthorizationCodeOnce() async throws {
        try await store.addApp(clientID: "wiki", name: "Wiki", redirectURI: "https://wiki.example/cb", logoURL: "logo",
                               secretHash: "s", idTokenAlg: "ES256", now: now)
        let eli = try await issueIdentity("eli-1", user: "eli")
        let expires = now.addingTimeInterval(300)
        let session = NewMFASession(accessCodeHash: "ac-1", webOTTHash: "w-1", clientID: "wiki", redirectURI: "https://wiki.example/cb",
                                    state: "xyz", nonce: "n-1", codeChallenge: "challenge", prerollID: "eli", expires: expires)
        let created = try await store.createSession(session)
        let duplicate = try await store.createSession(session)
        XCTAssertTrue(created)
        XCTAssertFalse(duplicate)
        let view = try await store.codeStatus(accessCodeHash: "ac-1", verb: .wid, now: now)
        XCTAssertEqual(view?.prerollID, "eli")
        XCTAssertEqual(view?.appName, "Wiki")
        XCTAssertEqual(view?.appLogoURL, "logo")
        let user = try await store.codeStatus(accessCodeHash: "ac-1", verb: .user("eli"), now: now)
        XCTAssertNotNil(user)
        let unknown = try await store.codeStatus(accessCodeHash: "ac-9", verb: .wid, now: now)
        XCTAssertNil(unknown)
        let pending = try await store.pollSession(webOTTHash: "w-1", now: now)
        XCTAssertEqual(pending, .pending)

        assertTrue(try await savePass2("p-ac", mpinID: eli, success: true, wid: "ac:ac-1"))
        let code = NewAuthorizationCode(code: "the-code", codeHash: "code-hash", expires: expires)
        let verdict = try await store.evaluate(authOTTHash: "p-ac", flow: .mobile(authOTT: "ott", code: code), maxAttempts: 3, now: now)
        XCTAssertEqual(verdict?.status, 200)
        let authorization = try XCTUnwrap(verdict?.authorization)
        XCTAssertEqual(authorization.code, "the-code")
        XCTAssertTrue(authorization.redirectURL.hasPrefix("https://wiki.example/cb?"), authorization.redirectURL)
        XCTAssertTrue(authorization.redirectURL.contains("code=the-code"))
        XCTAssertTrue(authorization.redirectURL.contains("state=xyz"))
        let handedOut = try await store.pollSession(webOTTHash: "w-1", now: now)
        XCTAssertEqual(handedOut, .authenticated(redirectURL: authorization.redirectURL))
        let done = try await store.pollSession(webOTTHash: "w-1", now: now)
        XCTAssertEqual(done, .done, "the redirect is handed out once")

        let otherClient = try await store.redeem(codeHash: "code-hash", clientID: "mail", now: now)
        XCTAssertEqual(otherClient, .invalid)
        let granted = try await store.redeem(codeHash: "code-hash", clientID: "wiki", now: now)
        guard case .granted(let grant) = granted else { return XCTFail("\(granted)") }
        XCTAssertEqual(grant.userID, "eli")
        XCTAssertEqual(grant.nonce, "n-1")
        XCTAssertEqual(grant.codeChallenge, "challenge")
        XCTAssertEqual(grant.redirectURI, "https://wiki.example/cb")
        XCTAssertEqual(grant.authTime.timeIntervalSince1970, now.timeIntervalSince1970, accuracy: 0.001)
        let reused = try await store.redeem(codeHash: "code-hash", clientID: "wiki", now: now)
        XCTAssertEqual(reused, .invalid, "single use")

        // A device's refusal.
        assertTrue(try await store.createSession(NewMFASession(
            accessCodeHash: "ac-2", webOTTHash: "w-2", clientID: "wiki", redirectURI: "https://wiki.example/cb", state: "s",
            nonce: nil, codeChallenge: "c", prerollID: "", expires: expires)))
        let aborted = try await store.codeStatus(accessCodeHash: "ac-2", verb: .abort, now: now)
        XCTAssertNotNil(aborted)
        let refused = try await store.pollSession(webOTTHash: "w-2", now: now)
        XCTAssertEqual(refused, .refused)
        let afterAbort = try await store.codeStatus(accessCodeHash: "ac-2", verb: .wid, now: now)
        XCTAssertNil(afterAbort, "a refused session takes no more verbs")
    }

    /// A registration that names the identity it replaces (pam_mpin's re-enrolment after a
    /// forgotten PIN) deletes it in its own transaction, and only with a right registration code
    /// of the same user: never another user's identity, never without a code or with a wrong one.
    func testARegistrationReplacesOnlyItsOwnUsersIdentityWithARightCode() async throws {
        let old = try await issueIdentity("ria-old", user: "ria")
        let other = try await issueIdentity("sam-1", user: "sam")
        func register(_ name: String, code: String?, replaces: String) async throws -> RegistrationOutcome {
            try await store.saveRegistration(
                mpinID: mpinID(name), userID: "ria", regOTTHash: "ott-" + name, activateKeyHash: "key-" + name,
                expires: now.addingTimeInterval(hour), mode: .link, activateCodeHash: nil, regCodeHash: code,
                details: RegistrationDetails(deviceName: nil, source: "127.0.0.1", replaces: replaces), now: now)
        }
        // No code: stored as any registration (pending), nothing deleted.
        let noCode = try await register("ria-a", code: nil, replaces: old)
        XCTAssertEqual(noCode, .stored(active: false, replaced: false))
        // A wrong code: refused, nothing deleted.
        assertTrue(try await store.issueRegCode(codeHash: "rc-ria", userID: "ria", expires: now.addingTimeInterval(hour), now: now))
        let wrong = try await register("ria-b", code: "rc-wrong", replaces: old)
        XCTAssertEqual(wrong, .regCodeRefused(wrongCodes: 1))
        // A right code naming another user's identity: stored, and sam's identity stays.
        let theirs = try await register("ria-c", code: "rc-ria", replaces: other)
        XCTAssertEqual(theirs, .stored(active: true, replaced: false))
        let samsAfter = try await store.identities(userID: "sam")
        XCTAssertEqual(samsAfter.map(\.fingerprint), [fingerprint(other)])
        var rias = try await store.identities(userID: "ria")
        XCTAssertEqual(rias.map(\.fingerprint), [fingerprint(old)])
        // A right code naming the user's own earlier identity: it goes, in the same transaction.
        assertTrue(try await store.issueRegCode(codeHash: "rc-ria-2", userID: "ria", expires: now.addingTimeInterval(hour), now: now))
        let own = try await register("ria-d", code: "rc-ria-2", replaces: old)
        XCTAssertEqual(own, .stored(active: true, replaced: true))
        rias = try await store.identities(userID: "ria")
        XCTAssertEqual(rias, [], "the old identity is gone; the new one is issued at its signature step")
    }

    func testRegistrationCodeIsSingleUseAndForItsUserOnly() async throws {
        let issued = try await store.issueRegCode(codeHash: "rc-1", userID: "fay", expires: now.addingTimeInterval(hour), now: now)
        let duplicate = try await store.issueRegCode(codeHash: "rc-1", userID: "gus", expires: now.addingTimeInterval(hour), now: now)
        XCTAssertTrue(issued)
        XCTAssertFalse(duplicate)
        let otherUser = try await registerWithCode("gus-1", user: "gus", codeHash: "rc-1")
        XCTAssertEqual(otherUser, .regCodeRefused(wrongCodes: 0))
        let used = try await registerWithCode("fay-1", user: "fay", codeHash: "rc-1")
        XCTAssertEqual(used, .stored(active: true), "the code stands for the verification")
        let again = try await registerWithCode("fay-2", user: "fay", codeHash: "rc-1")
        XCTAssertEqual(again, .regCodeRefused(wrongCodes: 0))
        assertTrue(try await store.issueRegCode(codeHash: "rc-2", userID: "fay", expires: now.addingTimeInterval(60), now: now))
        let expired = try await store.saveRegistration(
            mpinID: mpinID("fay-3"), userID: "fay", regOTTHash: "o", activateKeyHash: "k", expires: now.addingTimeInterval(hour),
            mode: .link, activateCodeHash: nil, regCodeHash: "rc-2",
            details: RegistrationDetails(deviceName: nil, source: ""), now: now.addingTimeInterval(61))
        XCTAssertEqual(expired, .regCodeRefused(wrongCodes: 0))
    }

    /// Wrong registration codes are counted in the database per user (docs/MFA.md §8): a flood of
    /// wrong codes for other user ids (more than the 10,000 the old in-memory table held)
    /// does not reset the target's count, nor does a fresh storage object (a restart) or a
    /// newly issued code. No count voids a code (docs/SECURITY.md §5): the right code still
    /// registers.
    func testWrongRegistrationCodesAreCountedPerUserAndSurviveRestart() async throws {
        assertTrue(try await store.issueRegCode(codeHash: "hal-code", userID: "hal", expires: now.addingTimeInterval(hour), now: now))
        for i in 0..<2 {
            let wrong = try await registerWithCode("hal-\(i)", user: "hal", codeHash: "guess-\(i)")
            XCTAssertEqual(wrong, .regCodeRefused(wrongCodes: i + 1))
        }
        // Other user ids, some with live codes of their own.
        for i in 0..<20 {
            assertTrue(try await store.issueRegCode(codeHash: "code-of-\(i)", userID: "user-\(i)",
                                                       expires: now.addingTimeInterval(hour), now: now))
        }
        let store = self.store, now = self.now
        let outcomes = try await withThrowingTaskGroup(of: [RegistrationOutcome].self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var seen: [RegistrationOutcome] = []
                    for i in stride(from: worker, to: 10_001, by: 8) {
                        seen.append(try await Self.registerWithCode(store, "flood-\(i)", user: "user-\(i)", codeHash: "flood-guess",
                                                                     now: now))
                    }
                    return seen
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        XCTAssertEqual(outcomes.count, 10_001)
        XCTAssertTrue(outcomes.allSatisfy { if case .regCodeRefused = $0 { true } else { false } })

        try await reopen()
        assertTrue(try await self.store.issueRegCode(codeHash: "hal-code-2", userID: "hal", expires: now.addingTimeInterval(hour),
                                                        now: now))
        let third = try await registerWithCode("hal-2", user: "hal", codeHash: "guess-2")
        XCTAssertEqual(third, .regCodeRefused(wrongCodes: 3), "the count survived the restart and the new code")
        let fourth = try await registerWithCode("hal-3", user: "hal", codeHash: "guess-3")
        XCTAssertEqual(fourth, .regCodeRefused(wrongCodes: 4), "and voids nothing")
        let halRight = try await registerWithCode("hal-4", user: "hal", codeHash: "hal-code")
        XCTAssertEqual(halRight, .stored(active: true), "wrong codes for the user id void no code")
        let rightToo = try await registerWithCode("hal-5", user: "hal", codeHash: "hal-code-2")
        XCTAssertEqual(rightToo, .stored(active: true))

        // The others' codes were not touched by the flood: one wrong code each, below the limit.
        let other = try await registerWithCode("user-3-ok", user: "user-3", codeHash: "code-of-3")
        XCTAssertEqual(other, .stored(active: true))

        // A right code starts the count again; a user without live codes has nothing counted.
        assertTrue(try await self.store.issueRegCode(codeHash: "ida-1", userID: "ida", expires: now.addingTimeInterval(hour), now: now))
        assertTrue(try await self.store.issueRegCode(codeHash: "ida-2", userID: "ida", expires: now.addingTimeInterval(hour), now: now))
        for i in 0..<2 { _ = try await registerWithCode("ida-w\(i)", user: "ida", codeHash: "guess-\(i)") }
        let right = try await registerWithCode("ida-ok", user: "ida", codeHash: "ida-1")
        XCTAssertEqual(right, .stored(active: true))
        for i in 0..<2 {
            let wrong = try await registerWithCode("ida-v\(i)", user: "ida", codeHash: "guess-v\(i)")
            XCTAssertEqual(wrong, .regCodeRefused(wrongCodes: i + 1), "counted from zero after the right code")
        }
        let rightAgain = try await registerWithCode("ida-ok2", user: "ida", codeHash: "ida-2")
        XCTAssertEqual(rightAgain, .stored(active: true))

        // Wrong codes for a user with no live code count nothing; those after her code is
        // issued are counted and void nothing.
        for i in 0..<3 {
            let early = try await registerWithCode("jo-e\(i)", user: "jo", codeHash: "guess-e\(i)")
            XCTAssertEqual(early, .regCodeRefused(wrongCodes: 0))
        }
        assertTrue(try await self.store.issueRegCode(codeHash: "jo-1", userID: "jo", expires: now.addingTimeInterval(hour), now: now))
        for i in 0..<3 {
            let wrong = try await registerWithCode("jo-w\(i)", user: "jo", codeHash: "guess-w\(i)")
            XCTAssertEqual(wrong, .regCodeRefused(wrongCodes: i + 1), "nothing was counted before the code was issued")
        }
        let joRight = try await registerWithCode("jo-ok", user: "jo", codeHash: "jo-1")
        XCTAssertEqual(joRight, .stored(active: true))
    }
}
