import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

// The storage contract under concurrent calls: what a transaction (SQLite) or a row lock
// (PostgreSQL) must make of parallel requests on one record.
extension StorageContractTests {
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
    /// and void nothing (docs/SECURITY.md §5). Several rounds: the later ones find PostgreSQL's
    /// pool grown, with connections enough to overlap.
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
