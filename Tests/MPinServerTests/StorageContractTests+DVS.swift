import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

// The DVS storage contract (Storage/Contract/DVSStorage.swift).
extension StorageContractTests {
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

        // Signatures seen valid are remembered (docs/SECURITY.md §5): only valid ones, once, until
        // the user's keys go.
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
}
