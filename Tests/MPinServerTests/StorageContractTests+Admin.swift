import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

// The administrator's storage contract (Storage/Contract/AdminStorage.swift).
extension StorageContractTests {
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
}
