import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// docs/SECURITY.md §6.5: several logins of one identity at once. With one pass-1 slot per
/// identity, the next pass 1 overwrote a login in flight, whose right PIN was then counted as
/// wrong (6 parallel right-PIN logins: 3 OK, 1 INCORRECT_PIN, 2 FAILED), and anyone who knew an
/// mpinId could block it. Also docs/SECURITY.md §6.1 on the server's side: the final step signs its
/// verdict over the client's nonce with the key clientSettings publishes.
class ConcurrentLoginTests: XCTestCase {
    class var storage: TestStorage { .sqlite }

    /// Six right-PIN logins of one identity in parallel, as the original SDK sends them (no
    /// pass-1 id) and as mpin-server's clients do (echoed id): every one succeeds.
    func testParallelRightPINLoginsAllSucceed() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            try await alice.registerFully("alice@example.com", pin: "1234")
            let permit = try await alice.timePermit()
            for echo in [false, true] {
                let client = alice
                // All pass 1s first, then all pass 2s: the interleaving that lost logins before.
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<6 {
                        group.addTask {
                            let (p2, _) = try await client.passes(pin: "1234", permit: permit, echo: echo)
                            return try await client.finalStep(p2)
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                XCTAssertEqual(statuses, Array(repeating: 200, count: 6), "echo: \(echo)")
            }
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// A pass 2 that finds no pass-1 state (made up, replayed, or its state evicted) is refused
    /// and never counted: three of them do not block the identity.
    func testPass2WithoutStateIsNotCounted() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            try await alice.registerFully("alice@example.com", pin: "1234")
            let (_, body) = try await alice.passes(pin: "1234")
            for _ in 0..<3 {
                let replay = try await server.client.send("POST", "/rps/pass2", body: body)
                XCTAssertEqual(replay.status, 403)
            }
            let made = Pass2Request(mpinId: alice.mpinIDHex, v: Hex.encode(try G1Point.generator.encoded()),
                                    pass1Id: Hex.encode([UInt8](repeating: 7, count: 16)))
            for _ in 0..<3 {
                let r = try await server.client.post("/rps/pass2", made)
                XCTAssertEqual(r.status, 403)
            }
            let status = try await alice.authenticate(pin: "1234", echo: true)
            XCTAssertEqual(status, 200, "no pass 2 without state was counted as a wrong PIN")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// A wrong PIN among parallel right ones is refused as a wrong PIN (401, not 403 for lost
    /// state), and the right ones succeed.
    func testWrongPINAmongParallelLoginsIsCountedOnce() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            try await alice.registerFully("alice@example.com", pin: "1234")
            let permit = try await alice.timePermit()
            let client = alice
            let results = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for pin in ["1234", "9999", "1234", "1234"] {
                    group.addTask {
                        let (p2, _) = try await client.passes(pin: pin, permit: permit, echo: true)
                        return (pin, try await client.finalStep(p2))
                    }
                }
                return try await group.reduce(into: [(String, Int)]()) { $0.append($1) }
            }
            XCTAssertEqual(results.filter { $0.0 == "1234" }.map(\.1), [200, 200, 200])
            XCTAssertEqual(results.filter { $0.0 == "9999" }.map(\.1), [401])
            let right = try await alice.authenticate(pin: "1234", echo: true)
            XCTAssertEqual(right, 200, "not blocked")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// The final step signs its verdict over the nonce the client sent with pass 2 (carried in
    /// the authOTT), the mpinId, the user id, the status and the context `token`, with the key
    /// clientSettings publishes; without a nonce it signs nothing.
    func testFinalStepSignsTheVerdict() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            try await alice.registerFully("alice@example.com", pin: "1234")
            let settings = try await server.client.get("/rps/clientSettings").decode(ClientSettings.self)
            let key = try XCTUnwrap(settings.verdictKey)
            XCTAssertTrue(Verdict.isPublicKey(key))
            func verifies(_ signature: String?, nonce: [UInt8], user: String = "alice@example.com", status: Int,
                          context: String = Verdict.tokenContext) -> Bool {
                Verdict.verify(signature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID, userID: user, status: status,
                               context: context)
            }

            let nonce = try SystemRandom.bytes(32)
            let (p2, _) = try await alice.passes(pin: "1234", echo: true, verdictNonce: nonce)
            let ok = try await server.client.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2)))
            XCTAssertEqual(ok.status, 200)
            let signature = try ok.decode(RPAAuthenticateResponse.self).verdictSignature
            XCTAssertTrue(verifies(signature, nonce: nonce, status: 200))
            XCTAssertFalse(verifies(signature, nonce: try SystemRandom.bytes(32), status: 200), "bound to the nonce")
            XCTAssertFalse(verifies(signature, nonce: nonce, user: "mallory@example.com", status: 200), "bound to the user")
            XCTAssertFalse(verifies(signature, nonce: nonce, status: 200,
                                    context: Verdict.deviceContext(accessNumber: "1234567", description: "")), "bound to the mode")

            // Three wrong PINs: the third is 410, signed as such.
            for pin in ["0000", "0001"] { _ = try await alice.authenticate(pin: pin, echo: true) }
            let (p3, _) = try await alice.passes(pin: "0002", echo: true, verdictNonce: nonce)
            let blocked = try await server.client.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(p3)))
            XCTAssertEqual(blocked.status, 410)
            let blockedSignature = try blocked.decode(RPAAuthenticateResponse.self).verdictSignature
            XCTAssertTrue(verifies(blockedSignature, nonce: nonce, status: 410))
            XCTAssertFalse(verifies(blockedSignature, nonce: nonce, status: 200), "bound to the status")

            // Without a nonce (the original SDK), nothing is signed.
            var bob = MPinTestClient(http: server.client)
            try await bob.registerFully("bob@example.com", pin: "1234")
            let (pb, _) = try await bob.passes(pin: "1234")
            let plain = try await server.client.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(pb)))
            XCTAssertEqual(plain.status, 200)
            XCTAssertNil(try plain.decode(RPAAuthenticateResponse.self).verdictSignature)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// A later review of that fix (docs/SECURITY.md §6.1): an impostor that captured a successful
    /// login's authOTT (say, by failing the host's login and keeping it) cannot have it signed over
    /// another login's nonce, at the RPA's final step or at the private /authenticate: the nonce is
    /// the one the proof came with, inside the authOTT, and an authOTT with another nonce in it has
    /// no record.
    func testCapturedAuthOTTIsSignedOnlyOverItsOwnNonce() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            try await alice.registerFully("alice@example.com", pin: "1234")
            let settings = try await server.client.get("/rps/clientSettings").decode(ClientSettings.self)
            let key = try XCTUnwrap(settings.verdictKey)
            let first = try SystemRandom.bytes(32), later = try SystemRandom.bytes(32)
            let (captured, _) = try await alice.passes(pin: "1234", echo: true, verdictNonce: first)
            let ott = captured.authOTT
            // The impostor swaps the nonce inside the authOTT for the later login's: no record.
            let swapped = String(ott.prefix(32)) + Hex.encode(later)
            let refused = try await server.client.post("/mpinAuthenticate",
                                                       AuthenticateRequest(mpinResponse: MPinResponse(authOTT: swapped)))
            XCTAssertEqual(refused.status, 408)
            // Presented as it is, at the private endpoint: signed over the first login's nonce only.
            let step = try await server.client.post("/authenticate", TokenAuthenticateRequest(authOTT: ott))
            XCTAssertEqual(step.status, 200)
            let signature = try step.decode(TokenAuthenticateResponse.self).verdictSignature
            for (nonce, expected) in [(first, true), (later, false)] {
                XCTAssertEqual(Verdict.verify(signature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID,
                                              userID: "alice@example.com", status: 200, context: Verdict.tokenContext), expected)
            }
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
