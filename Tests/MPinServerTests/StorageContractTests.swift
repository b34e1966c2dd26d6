import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

// The storage contract (Sources/MPinServer/Storage/Contract), method by method, called directly
// on a backend opened as the server opens it (`DataDirectory.openDatabase`): every test body
// runs on SQLite here and on PostgreSQL in `StorageContractPostgresTests`, which only names the
// backend. The protocols are reached through the `StorageContract` SPI (no testable import).
// Hashes are opaque strings to the storage; mpinIds are hex.

class StorageContractTests: XCTestCase {
    /// The backend every test of the class runs on.
    class var storage: TestStorage { .sqlite }

    private(set) var server: TestServer?
    private var database: ServerDatabase?
    /// The backend under test.
    var store: any StorageBackend { database!.backend }
    let now = Date()
    let hour: TimeInterval = 3600

    override func setUp() async throws {
        try await super.setUp()
        if Self.storage == .postgres { try TestStorage.requirePostgres() }
        let server = try await TestServer(storage: Self.storage)
        self.server = server
        database = try await openDatabase()
    }

    override func tearDown() async throws {
        await database?.close()
        database = nil
        await server?.shutdown()
        server = nil
        try await super.tearDown()
    }

    /// A fresh storage object on the test's database (what a restarted server opens).
    func openDatabase() async throws -> ServerDatabase {
        var logger = Logger(label: "storage-contract-test")
        logger.logLevel = .critical
        return try await DataDirectory(path: try XCTUnwrap(server).dataDir).openDatabase(logger: logger)
    }

    /// Closes the storage object and opens another on the same database.
    func reopen() async throws {
        await database?.close()
        database = try await openDatabase()
    }

    /// XCTAssertTrue for an awaited value (its autoclosure cannot await).
    func assertTrue(_ value: Bool, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(value, message, file: file, line: line)
    }

    func mpinID(_ name: String) -> String { Hex.encode(Array(name.utf8)) }

    func fingerprint(_ mpinIDHex: String) -> String { Hex.encode(MPin.hashID(Hex.decode(mpinIDHex)!)) }

    /// Registers and issues an identity of `user` (auto mode); its mpinId.
    @discardableResult
    func issueIdentity(_ name: String, user: String) async throws -> String {
        let id = mpinID(name)
        let saved = try await store.saveRegistration(
            mpinID: id, userID: user, regOTTHash: "ott-" + name, activateKeyHash: "key-" + name,
            expires: now.addingTimeInterval(hour), mode: .auto, activateCodeHash: nil, regCodeHash: nil,
            details: RegistrationDetails(deviceName: nil, source: "127.0.0.1"), now: now)
        XCTAssertEqual(saved, .stored(active: true))
        let issued = try await store.consumeRegistration(mpinID: id, regOTTHash: "ott-" + name, now: now)
        XCTAssertEqual(issued, .issued(userID: user))
        return id
    }

    /// A registration of `user` presenting the registration code with hash `codeHash`.
    func registerWithCode(_ name: String, user: String, codeHash: String, maxAttempts: Int = 3) async throws -> RegistrationOutcome {
        try await Self.registerWithCode(store, name, user: user, codeHash: codeHash, maxAttempts: maxAttempts, now: now)
    }

    /// The same from a concurrent task (which cannot capture the test case).
    static func registerWithCode(_ store: any StorageBackend, _ name: String, user: String, codeHash: String,
                                 maxAttempts: Int = 3, now: Date) async throws -> RegistrationOutcome {
        try await store.saveRegistration(
            mpinID: Hex.encode(Array(name.utf8)), userID: user, regOTTHash: "ott-" + name, activateKeyHash: "key-" + name,
            expires: now.addingTimeInterval(3600), mode: .link, activateCodeHash: nil, regCodeHash: codeHash, details: RegistrationDetails(deviceName: nil, source: "127.0.0.1"), now: now)
    }

    /// A pass-2 result of `mpinID` stored under `hash`.
    func savePass2(_ hash: String, mpinID: String, success: Bool, wid: String = "") async throws -> Bool {
        try await store.saveAuth(authOTTHash: hash, mpinID: mpinID, success: success, wid: wid, otp: nil,
                                 expires: now.addingTimeInterval(60), now: now)
    }

    // MARK: Registration

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
        XCTAssertEqual(wrongCode, .activationCodeRefused, "a wrong activation code stores nothing (issue 37)")
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

    // MARK: Administration

    func testAdministratorsUserOperations() async throws {
        let unknown = try await store.changeUser(userID: "nobody", .activate)
        XCTAssertFalse(unknown)
        try await store.addUser(userID: "bob", activationCodeHash: "h", now: now)
        let listed = try await store.listUsers(maxAttempts: 3)
        XCTAssertEqual(listed.map(\.userId), ["bob"])
        XCTAssertEqual(listed.first?.state, "pending")

        let bob1 = mpinID("bob-1"), bob2 = mpinID("bob-2")
        for id in [bob1, bob2] {
            _ = try await store.saveRegistration(
                mpinID: id, userID: "bob", regOTTHash: "ott-" + id, activateKeyHash: "key", expires: now.addingTimeInterval(hour),
                mode: .link, activateCodeHash: nil, regCodeHash: nil,
                details: RegistrationDetails(deviceName: "phone", source: "a"), now: now)
        }
        let pending = try await store.pendingRegistrations(userID: "bob", now: now)
        XCTAssertEqual(Set(pending.map(\.fingerprint)), [fingerprint(bob1), fingerprint(bob2)])
        let noSuch = try await store.activateRegistration(userID: "bob", mpinID: mpinID("bob-9"), now: now)
        XCTAssertFalse(noSuch)
        let notBobs = try await store.activateRegistration(userID: "eve", mpinID: bob1, now: now)
        XCTAssertFalse(notBobs, "another user's registration")
        let one = try await store.activateRegistration(userID: "bob", mpinID: bob1, now: now)
        XCTAssertTrue(one)
        let afterwards = try await store.listUsers(maxAttempts: 3)
        XCTAssertEqual(afterwards.first?.state, "active")
        let issued = try await store.consumeRegistration(mpinID: bob1, regOTTHash: "ott-" + bob1, now: now)
        XCTAssertEqual(issued, .issued(userID: "bob"))
        let stillPending = try await store.consumeRegistration(mpinID: bob2, regOTTHash: "ott-" + bob2, now: now)
        XCTAssertEqual(stillPending, .notActive, "only the named registration was activated")

        let identities = try await store.identities(userID: "bob")
        XCTAssertEqual(identities.map(\.fingerprint), [fingerprint(bob1)])
        XCTAssertEqual(identities.first?.failedAttempts, 0)
        let summary = try await store.listUsers(maxAttempts: 3).first
        XCTAssertEqual(summary?.identities, 1)
        XCTAssertEqual(summary?.pendingRegistrations, 1)

        let activated = try await store.changeUser(userID: "bob", .activate)
        XCTAssertTrue(activated)
        let deleted = try await store.changeUser(userID: "bob", .delete)
        XCTAssertTrue(deleted)
        let empty = try await store.listUsers(maxAttempts: 3)
        XCTAssertEqual(empty, [])
        let noIdentities = try await store.identities(userID: "bob")
        XCTAssertEqual(noIdentities, [])
    }

    func testApplications() async throws {
        try await store.addApp(clientID: "c1", name: "Wiki", redirectURI: "https://wiki.example/cb", logoURL: "https://wiki.example/l.png",
                               secretHash: "s1", idTokenAlg: "RS256", now: now)
        try await store.addApp(clientID: "c2", name: "Mail", redirectURI: "https://mail.example/cb", logoURL: "",
                               secretHash: "s2", idTokenAlg: "ES256", now: now.addingTimeInterval(1))
        let app = try await store.app(clientID: "c1")
        XCTAssertEqual(app?.name, "Wiki")
        XCTAssertEqual(app?.redirectURI, "https://wiki.example/cb")
        XCTAssertEqual(app?.logoURL, "https://wiki.example/l.png")
        XCTAssertEqual(app?.secretHash, "s1")
        XCTAssertEqual(app?.idTokenAlg, "RS256")
        let missing = try await store.app(clientID: "c3")
        XCTAssertNil(missing)
        let apps = try await store.listApps()
        XCTAssertEqual(apps.map(\.clientId), ["c1", "c2"])
        let deleted = try await store.deleteApp(clientID: "c1")
        let again = try await store.deleteApp(clientID: "c1")
        XCTAssertTrue(deleted)
        XCTAssertFalse(again)
        let gone = try await store.app(clientID: "c1")
        XCTAssertNil(gone)
    }

    // MARK: Authentication

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
        for i in 0..<3 {
            assertTrue(try await savePass2("wrong-\(i)", mpinID: cy, success: false))
            let verdict = try await store.evaluate(authOTTHash: "wrong-\(i)", flow: .direct, maxAttempts: 3, now: now)
            statuses.append(try XCTUnwrap(verdict).status)
            XCTAssertEqual(verdict?.blockedNow, i == 2)
        }
        XCTAssertEqual(statuses, [401, 401, 410])
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

    // MARK: MFA

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

    /// Wrong registration codes are counted in the database per user (issue 28): a flood of
    /// wrong codes for other user ids (more than the 10,000 the old in-memory table held)
    /// does not reset the target's count, nor does a fresh storage object (a restart) or a
    /// newly issued code. No count voids a code (issue 37): the right code still registers.
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

    // MARK: DVS

    func testDVSTokensAndSigningKeyCounter() async throws {
        let issued = try await store.issueDVSToken(tokenHash: "t-1", userID: "jo", expires: now.addingTimeInterval(60))
        let taken = try await store.issueDVSToken(tokenHash: "t-1", userID: "kai", expires: now.addingTimeInterval(60))
        XCTAssertTrue(issued)
        XCTAssertFalse(taken)
        let peek = try await store.dvsTokenUser(tokenHash: "t-1", now: now)
        XCTAssertEqual(peek, "jo")
        let used = try await store.useDVSToken(tokenHash: "t-1", now: now)
        XCTAssertEqual(used, "jo")
        let usedAgain = try await store.useDVSToken(tokenHash: "t-1", now: now)
        let peekAfter = try await store.dvsTokenUser(tokenHash: "t-1", now: now)
        XCTAssertNil(usedAgain)
        XCTAssertNil(peekAfter)
        assertTrue(try await store.issueDVSToken(tokenHash: "t-2", userID: "jo", expires: now.addingTimeInterval(60)))
        let late = try await store.useDVSToken(tokenHash: "t-2", now: now.addingTimeInterval(61))
        XCTAssertNil(late, "expired")

        let key = mpinID("jo-sign")
        let saved = try await store.saveSigningKey(mpinID: key, userID: "jo", publicKey: "04ab", now: now)
        let savedAgain = try await store.saveSigningKey(mpinID: key, userID: "kai", publicKey: "04cd", now: now)
        XCTAssertTrue(saved)
        XCTAssertFalse(savedAgain)
        let stored = try await store.signingKey(mpinID: key)
        XCTAssertEqual(stored?.userID, "jo")
        XCTAssertEqual(stored?.publicKey, "04ab")
        XCTAssertEqual(stored?.blocked, false)
        let none = try await store.signingKey(mpinID: mpinID("none"))
        XCTAssertNil(none)

        var verdicts: [SignatureVerdict] = []
        for valid in [false, true, false, false, true] {
            verdicts.append(try await store.recordSignatureVerdict(mpinID: key, valid: valid, maxAttempts: 2, now: now))
        }
        XCTAssertEqual(verdicts, [.invalid, .valid, .invalid, .blocked, .blocked], "a valid one resets; the second in a row blocks")
        let blocked = try await store.signingKey(mpinID: key)
        XCTAssertEqual(blocked?.blocked, true)
        let unknown = try await store.recordSignatureVerdict(mpinID: mpinID("none"), valid: true, maxAttempts: 2, now: now)
        XCTAssertEqual(unknown, .unknownKey)
        try await store.addUser(userID: "jo", activationCodeHash: "x", now: now)
        assertTrue(try await store.changeUser(userID: "jo", .unblock))
        let afterUnblock = try await store.recordSignatureVerdict(mpinID: key, valid: true, maxAttempts: 2, now: now)
        XCTAssertEqual(afterUnblock, .valid)

        // Signatures seen valid are remembered (issue 37): only valid ones, once, until the
        // user's keys go.
        let seen = SeenSignature(key: "sig-1", digest: "d-1")
        let invalidSeen = try await store.recordSignatureVerdict(mpinID: key, valid: false, seen: SeenSignature(key: "sig-0", digest: "d-0"),
                                                                 maxAttempts: 2, now: now)
        let validSeen = try await store.recordSignatureVerdict(mpinID: key, valid: true, seen: seen, maxAttempts: 2, now: now)
        let again = try await store.recordSignatureVerdict(mpinID: key, valid: true, seen: SeenSignature(key: "sig-1", digest: "d-2"),
                                                           maxAttempts: 2, now: now)
        XCTAssertEqual([invalidSeen, validSeen, again], [.invalid, .valid, .valid])
        let remembered = try await store.seenSignature(key: "sig-1")
        let notRemembered = try await store.seenSignature(key: "sig-0")
        XCTAssertEqual(remembered, "d-1", "the first record stays")
        XCTAssertNil(notRemembered, "an invalid signature is not remembered")
        assertTrue(try await store.changeUser(userID: "jo", .delete))
        let afterDelete = try await store.seenSignature(key: "sig-1")
        XCTAssertNil(afterDelete, "deleted with the user's keys")
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

    // MARK: Concurrency

    /// N concurrent wrong-PIN verdicts for one identity: none lost, exactly one blocks. Several
    /// rounds (fresh identities): the later ones find PostgreSQL's pool grown, so they overlap.
    func testConcurrentWrongPINsLoseNoUpdate() async throws {
        let max = 5, attempts = 12
        let store = self.store, now = self.now
        for round in 0..<4 {
            let user = "mo-\(round)"
            let mo = try await issueIdentity(user + "-1", user: user)
            for i in 0..<attempts { assertTrue(try await savePass2("\(user)-\(i)", mpinID: mo, success: false)) }
            let verdicts = try await withThrowingTaskGroup(of: AuthVerdict?.self) { group in
                for i in 0..<attempts {
                    group.addTask { try await store.evaluate(authOTTHash: "\(user)-\(i)", flow: .direct, maxAttempts: max, now: now) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let statuses = verdicts.compactMap { $0?.status }
            XCTAssertEqual(statuses.count, attempts)
            XCTAssertEqual(statuses.filter { $0 == 401 }.count, max - 1, "round \(round)")
            XCTAssertEqual(statuses.filter { $0 == 410 }.count, attempts - max + 1, "round \(round)")
            XCTAssertEqual(verdicts.filter { $0?.blockedNow == true }.count, 1, "round \(round): exactly one attempt blocked")
            let counter = try await store.identities(userID: user)
            XCTAssertEqual(counter.first?.failedAttempts, max, "round \(round)")
            let listed = try await store.listUsers(maxAttempts: max).first { $0.userId == user }
            XCTAssertEqual(listed?.blocked, true, "round \(round)")

            // Below the limit, every one of them is counted.
            let nedUser = "ned-\(round)"
            let ned = try await issueIdentity(nedUser + "-1", user: nedUser)
            for i in 0..<attempts { assertTrue(try await savePass2("\(nedUser)-\(i)", mpinID: ned, success: false)) }
            let belowLimit = try await withThrowingTaskGroup(of: Int?.self) { group in
                for i in 0..<attempts {
                    group.addTask {
                        try await store.evaluate(authOTTHash: "\(nedUser)-\(i)", flow: .direct, maxAttempts: 100, now: now)?.status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(belowLimit, Array(repeating: 401, count: attempts), "round \(round)")
            let nedCounter = try await store.identities(userID: nedUser)
            XCTAssertEqual(nedCounter.first?.failedAttempts, attempts, "round \(round): no lost update")
        }
    }

    /// Two concurrent final steps on one pass-2 result: exactly one gets the verdict; and of
    /// two approvals of one access number, exactly one is handed to the requester.
    func testConcurrentFinalStepsSucceedOnce() async throws {
        let oz = try await issueIdentity("oz-1", user: "oz")
        let store = self.store, now = self.now
        for round in 0..<10 {
            assertTrue(try await savePass2("oz-\(round)", mpinID: oz, success: true))
            let results = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<2 {
                    group.addTask { try await store.evaluate(authOTTHash: "oz-\(round)", flow: .direct, maxAttempts: 3, now: now)?.status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(results.compactMap { $0 }, [200], "round \(round): \(results)")
        }
        // The same with the RPA's sessions (on PostgreSQL the record's use and the session are one
        // statement): one verdict, and only the winner's session opened.
        for round in 0..<10 {
            assertTrue(try await savePass2("oz-s-\(round)", mpinID: oz, success: true))
            let results = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for step in 0..<2 {
                    let session = NewSession(token: "t", tokenHash: "oz-s-\(round)-\(step)", expires: now.addingTimeInterval(3600))
                    group.addTask {
                        (step, try await store.evaluate(authOTTHash: "oz-s-\(round)", flow: .direct, maxAttempts: 3, now: now,
                                                        session: session, logoutData: nil)?.status)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(results.compactMap(\.1), [200], "round \(round): \(results)")
            for (step, status) in results {
                let opened = try await store.endSession(tokenHash: "oz-s-\(round)-\(step)", userID: "oz", now: now)
                XCTAssertEqual(opened, status == 200, "round \(round), step \(step)")
            }
        }
        for round in 0..<5 {
            let wid = String(2_000_000 + round)
            assertTrue(try await store.createAccessNumber(wid: wid, webOTTHash: "web-\(round)", expires: now.addingTimeInterval(60),
                                                             now: now, description: ""))
            for device in 0..<2 { assertTrue(try await savePass2("an-\(round)-\(device)", mpinID: oz, success: true, wid: wid)) }
            let code = NewAuthorizationCode(code: "c", codeHash: "ch", expires: now.addingTimeInterval(60))
            let results = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for device in 0..<2 {
                    group.addTask {
                        (device, try await store.evaluate(authOTTHash: "an-\(round)-\(device)",
                                                          flow: .mobile(authOTT: "ott-\(device)", code: code), maxAttempts: 3, now: now)?.status)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let winners = results.filter { $0.1 == 200 }
            XCTAssertEqual(winners.count, 1, "round \(round): \(results)")
            let handedOut = try await store.pollAccessNumber(webOTTHash: "web-\(round)", now: now)
            XCTAssertEqual(handedOut, winners.first.map { "ott-\($0.0)" }, "the requester gets the winner's authOTT")
        }
    }

    /// Two concurrent redemptions of one registration code: exactly one registers.
    func testConcurrentRegistrationCodeRedemptionWinsOnce() async throws {
        let store = self.store, now = self.now
        for round in 0..<10 {
            assertTrue(try await store.issueRegCode(codeHash: "race-\(round)", userID: "pia", expires: now.addingTimeInterval(hour),
                                                       now: now))
            let outcomes = try await withThrowingTaskGroup(of: RegistrationOutcome.self) { group in
                for device in 0..<2 {
                    group.addTask { try await Self.registerWithCode(store, "pia-\(round)-\(device)", user: "pia",
                                                                    codeHash: "race-\(round)", maxAttempts: 1_000, now: now) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(outcomes.filter { $0 == .stored(active: true) }.count, 1, "round \(round): \(outcomes)")
            XCTAssertEqual(outcomes.filter { $0 == .regCodeRefused(wrongCodes: 0) }.count, 1, "round \(round): \(outcomes)")
        }
    }

    /// Concurrent wrong codes for one user are each counted once (no lost update, none twice)
    /// and void nothing (issue 37). Several rounds: the later ones find PostgreSQL's pool grown,
    /// with connections enough to overlap.
    func testConcurrentWrongRegistrationCodesAreEachCountedOnce() async throws {
        let store = self.store, now = self.now
        for round in 0..<8 {
            let user = "quin-\(round)"
            assertTrue(try await store.issueRegCode(codeHash: "code-\(round)", userID: user, expires: now.addingTimeInterval(hour),
                                                    now: now))
            let outcomes = try await withThrowingTaskGroup(of: RegistrationOutcome.self) { group in
                for i in 0..<12 {
                    group.addTask { try await Self.registerWithCode(store, "\(user)-\(i)", user: user, codeHash: "guess-\(i)", now: now) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let counts = outcomes.compactMap { outcome -> Int? in
                if case .regCodeRefused(let n) = outcome { return n }
                return nil
            }
            XCTAssertEqual(counts.sorted(), Array(1...12), "round \(round): \(outcomes)")
            let right = try await registerWithCode("\(user)-ok", user: user, codeHash: "code-\(round)")
            XCTAssertEqual(right, .stored(active: true), "round \(round): not voided")
        }
    }
}

/// The same contract on PostgreSQL (MPIN_TEST_POSTGRES; `make test-postgres`).
final class StorageContractPostgresTests: StorageContractTests {
    override class var storage: TestStorage { .postgres }

    /// XCTest on Linux finds a class (and the tests it inherits) through a test it declares:
    /// this one checks that the variant's backend is PostgreSQL.
    func testVariantIsPostgreSQL() async throws {
        try await issueIdentity("variant-1", user: "variant")
        let users = try await store.listUsers(maxAttempts: 3)
        XCTAssertEqual(users.map(\.userId), ["variant"])
        let database = try XCTUnwrap(server?.postgresDatabase)
        let identities = try await TestPostgres.integer("SELECT count(*) FROM identities WHERE user_id = 'variant'",
                                                         database: database)
        XCTAssertEqual(identities, 1)
    }

    /// A direct login's final step is answered from its node's hint, in one statement, when
    /// nothing changed since its pass 2, and by the full locked path when the identity did (the
    /// verdicts themselves are checked by testFinalStepSeesIdentityChangesAfterPass2).
    func testFinalStepUsesItsHintOnlyWhileNothingChanged() async throws {
        let iv = try await issueIdentity("iv-1", user: "iv")
        let before = try XCTUnwrap(store.finalStepHintVerdicts)
        assertTrue(try await savePass2("iv-right", mpinID: iv, success: true))
        let right = try await store.evaluate(authOTTHash: "iv-right", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(right?.status, 200)
        XCTAssertEqual(store.finalStepHintVerdicts, before + 1, "an unchanged login is answered from its hint")

        // A wrong PIN counted between a right PIN's pass 2 and its final step.
        assertTrue(try await savePass2("iv-right-2", mpinID: iv, success: true))
        assertTrue(try await savePass2("iv-wrong", mpinID: iv, success: false))
        let wrong = try await store.evaluate(authOTTHash: "iv-wrong", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(wrong?.status, 401)
        let changed = try await store.evaluate(authOTTHash: "iv-right-2", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(changed?.status, 200)
        XCTAssertEqual(store.finalStepHintVerdicts, before + 1, "a changed identity is decided on the locked rows")
        let counter = try await store.identities(userID: "iv").first?.failedAttempts
        XCTAssertEqual(counter, 0)
    }
}
