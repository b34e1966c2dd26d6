import Foundation
import MPinServer
import XCTest

// Offline logins hosts report (ServerStorage.recordOfflineLogins, AdminStorage.offlineLogins),
// on SQLite here and on PostgreSQL through StorageContractPostgresTests.
extension StorageContractTests {
    /// An entry whose id (the host's, per login) is `id`, or made of its other fields.
    private func entry(_ user: String, host: String = "web1", service: String = "sudo", outcome: String = "OK",
                       time: Int64, identity: String? = nil, id: String? = nil) -> OfflineLoginEntry {
        OfflineLoginEntry(mpinID: mpinID(identity ?? user + "-1"), id: id ?? "\(time)-\(service)-\(outcome)", host: host,
                          source: "192.0.2.7", service: service, outcome: outcome, time: time, reported: now.timeIntervalSince1970)
    }

    func testOfflineLoginsAreKeptOnceNewestFirstAndPerUser() async throws {
        try await store.addUser(userID: "alice", activationCodeHash: "h", now: now)
        try await store.addUser(userID: "bob", activationCodeHash: "h2", now: now)
        let first = [entry("alice", time: 1_000), entry("alice", outcome: "INCORRECT_PIN", time: 1_010)]
        let added = try await store.recordOfflineLogins(first, userID: "alice")
        XCTAssertEqual(added, first)
        // The same report sent again (the host did not see the answer) adds nothing; a new
        // login with it does.
        let again = try await store.recordOfflineLogins(first + [entry("alice", service: "sshd", time: 1_020)], userID: "alice")
        XCTAssertEqual(again.map(\.service), ["sshd"])
        _ = try await store.recordOfflineLogins([entry("bob", time: 1_005)], userID: "bob")

        let alice = try await store.offlineLogins(userID: "alice")
        XCTAssertEqual(alice.map(\.time), [1_020, 1_010, 1_000], "newest first")
        XCTAssertEqual(alice.map(\.outcome), ["OK", "INCORRECT_PIN", "OK"])
        XCTAssertEqual(alice.first?.host, "web1")
        XCTAssertEqual(alice.first?.source, "192.0.2.7")
        XCTAssertEqual(alice.first?.fingerprint, fingerprint(mpinID("alice-1")))
        // Two wrong PINs in one second, told apart by their ids: both are kept, once.
        let twice = [entry("alice", outcome: "INCORRECT_PIN", time: 1_030, id: "a"),
                     entry("alice", outcome: "INCORRECT_PIN", time: 1_030, id: "b")]
        let both = try await store.recordOfflineLogins(twice, userID: "alice")
        XCTAssertEqual(both.count, 2)
        let none = try await store.recordOfflineLogins(twice, userID: "alice")
        XCTAssertEqual(none, [])
        let withTwice = try await store.offlineLogins(userID: "alice")
        XCTAssertEqual(withTwice.map(\.time), [1_030, 1_030, 1_020, 1_010, 1_000])

        let bob = try await store.offlineLogins(userID: "bob")
        XCTAssertEqual(bob.map(\.time), [1_005], "another user's report is theirs alone")
        let nobody = try await store.offlineLogins(userID: "carol")
        XCTAssertEqual(nobody, [])
    }

    func testOfflineLoginsAreBoundedPerUserAndGoWithTheUser() async throws {
        try await store.addUser(userID: "alice", activationCodeHash: "h", now: now)
        try await store.addUser(userID: "bob", activationCodeHash: "h2", now: now)
        _ = try await store.recordOfflineLogins([entry("bob", time: 5)], userID: "bob")
        // Reports of 50 (the most a host sends) until well past the bound of 200.
        for round in 0..<5 {
            let batch = (0..<50).map { entry("alice", time: Int64(10_000 + round * 50 + $0)) }
            _ = try await store.recordOfflineLogins(batch, userID: "alice")
        }
        let kept = try await store.offlineLogins(userID: "alice")
        XCTAssertEqual(kept.count, 200)
        XCTAssertEqual(kept.first?.time, 10_249, "the newest are kept")
        XCTAssertEqual(kept.last?.time, 10_050, "the oldest beyond 200 are dropped")
        let bobsKept = try await store.offlineLogins(userID: "bob")
        XCTAssertEqual(bobsKept.count, 1, "one user's reports never drop another's")
        // Logins that share one time (a report of 50 services at one second, again and again)
        // are held to the bound too.
        for round in 0..<5 {
            let tied = (0..<50).map { entry("alice", service: "s\(round)-\($0)", time: 20_000) }
            _ = try await store.recordOfflineLogins(tied, userID: "alice")
        }
        let tiedKept = try await store.offlineLogins(userID: "alice")
        XCTAssertEqual(tiedKept.count, 200)
        XCTAssertEqual(Set(tiedKept.map(\.time)), [20_000])

        // A revocation keeps the record of what happened; deleting the user removes it.
        let revoked = try await store.changeUser(userID: "alice", .revoke)
        XCTAssertTrue(revoked)
        let afterRevoke = try await store.offlineLogins(userID: "alice")
        XCTAssertEqual(afterRevoke.count, 200)
        let deleted = try await store.changeUser(userID: "alice", .delete)
        XCTAssertTrue(deleted)
        let afterDelete = try await store.offlineLogins(userID: "alice")
        XCTAssertEqual(afterDelete, [])
        let bobsAfter = try await store.offlineLogins(userID: "bob")
        XCTAssertEqual(bobsAfter.count, 1)
    }
}
