import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// What a host's token may approve, and the answers a host keeps something from (docs/SECURITY.md
/// §2–§3): a registration marked for host logins approves no access number or web login,
/// whoever writes a code into pass 2's WID; pass 2's look-ups of access numbers are counted; a
/// refused time permit is signed over the host's nonce.
class HostScopeTests: XCTestCase {
    /// A registration asking for the host scope gets an mpinId that carries it; any other
    /// scope is refused.
    func testHostScopeIsWrittenIntoTheMpinId() async throws {
        let server = try await TestServer(storage: .sqlite)
        try await server.start()
        do {
            let host = try await server.client.put("/rps/user", RegisterRequest(userId: "alice@example.org", scope: "host"))
            XCTAssertEqual(host.status, 200)
            let mpinID = try XCTUnwrap(Hex.decode(try host.decode(RegisterResponse.self).mpinId))
            XCTAssertTrue(MPinIdentity.isHostScoped(mpinID))
            XCTAssertEqual(MPinIdentity.parse(mpinID)?.userID, "alice@example.org")

            let plain = try await server.client.put("/rps/user", RegisterRequest(userId: "bob@example.org"))
            XCTAssertFalse(MPinIdentity.isHostScoped(try XCTUnwrap(Hex.decode(try plain.decode(RegisterResponse.self).mpinId))))

            let other = try await server.client.put("/rps/user", RegisterRequest(userId: "carol@example.org", scope: "web"))
            XCTAssertEqual(other.status, 400)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// A relay between a host and the server writes a waiting access number into pass 2's WID
    /// (and would post the final step to the device endpoint): with a host token's proof the
    /// server refuses pass 2, the number stays unapproved, and the host's own login still works.
    /// A device's (unscoped) registration approves the same number as before.
    func testHostTokenApprovesNoAccessNumber() async throws {
        let server = try await TestServer(storage: .sqlite) { $0.mobileWaitSeconds = 2 }
        try await server.start()
        do {
            let client = server.client!
            var alice = MPinTestClient(http: client)
            let registered = try await client.put("/rps/user", RegisterRequest(userId: "alice@example.org", scope: "host"))
            let reg = try registered.decode(RegisterResponse.self)
            alice.mpinIDHex = reg.mpinId
            alice.regOTT = reg.regOTT
            try await alice.confirmAndFinish(pin: "1234")

            let issued = try await client.send("POST", "/rps/getAccessNumber",
                                               body: try JSONEncoder().encode(AccessNumberRequest(description: "a waiting login")))
            let an = try issued.decode(AccessNumberResponse.self)

            // The relay's pass 2: alice's right PIN, the access number in WID.
            let permit = try await alice.timePermit()
            let tp = try XCTUnwrap(permit)
            let x = try SystemRandom.scalar()
            let c1 = try MPin.client1(date: tp.date, mpinID: alice.mpinID, x: x, pin: MPinTestClient.pinValue("1234"),
                                      token: alice.token, timePermit: tp.permit)
            let p1 = try await client.post("/rps/pass1", Pass1Request(mpinId: alice.mpinIDHex, ut: Hex.encode(c1.ut!), u: Hex.encode(c1.u)))
            let y = try XCTUnwrap(Hex.decode(try p1.decode(Pass1Response.self).y))
            let v = try MPin.client2(x: x, y: y, sec: c1.sec)
            let relayed = try await client.post("/rps/pass2", Pass2Request(mpinId: alice.mpinIDHex, v: Hex.encode(v), wid: an.accessNumber,
                                                                           otp: false, pass1Id: nil, verdictNonce: nil))
            XCTAssertEqual(relayed.status, 403, String(decoding: relayed.body, as: UTF8.self))
            let poll = try await client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT))
            XCTAssertNotEqual(poll.status, 200, "the access number was approved by a host token")
            let live = try await client.get("/rps/accessnumber/\(an.accessNumber)")
            XCTAssertEqual(live.status, 200, "the access number is still waiting")

            // Her host login is untouched.
            let direct = try await alice.authenticate(pin: "1234")
            XCTAssertEqual(direct, 200)

            // A device's registration (no scope) still approves it.
            var device = MPinTestClient(http: client)
            try await device.registerFully("dora@example.org", pin: "4321")
            let (p2, _) = try await device.passes(pin: "4321", wid: an.accessNumber)
            let approval = Task { try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2))) }
            var approved = false
            for _ in 0..<50 where !approved {
                approved = try await client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT)).status == 200
                if !approved { try await Task.sleep(nanoseconds: 50_000_000) }
            }
            XCTAssertTrue(approved, "a device's registration approves the access number")
            _ = try? await approval.value
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// Pass 2 looks up a 7-digit WID as codeStatus looks up a web login's short code: counted
    /// per identity, so that a registered identity cannot sweep the codes of waiting browsers.
    func testPass2AccessNumberLookUpsAreCounted() async throws {
        let server = try await TestServer(storage: .sqlite) { $0.accessNumberRequestsPerMinute = 5 }
        try await server.start()
        do {
            var mallory = MPinTestClient(http: server.client)
            try await mallory.registerFully("mallory@example.org", pin: "2222")
            var statuses: [Int] = []
            for n in 0..<8 {
                let permit = try await mallory.timePermit()
                let tp = try XCTUnwrap(permit)
                let x = try SystemRandom.scalar()
                let c1 = try MPin.client1(date: tp.date, mpinID: mallory.mpinID, x: x, pin: MPinTestClient.pinValue("2222"),
                                          token: mallory.token, timePermit: tp.permit)
                let p1 = try await server.client.post("/rps/pass1", Pass1Request(mpinId: mallory.mpinIDHex, ut: Hex.encode(c1.ut!),
                                                                                 u: Hex.encode(c1.u)))
                let y = try XCTUnwrap(Hex.decode(try p1.decode(Pass1Response.self).y))
                let v = try MPin.client2(x: x, y: y, sec: c1.sec)
                let code = try XCTUnwrap((100_000 + 20 * n..<100_000 + 20 * n + 20).lazy.compactMap(AccessNumber.issue(body:)).first)
                let r = try await server.client.post("/rps/pass2", Pass2Request(mpinId: mallory.mpinIDHex, v: Hex.encode(v), wid: code,
                                                                                otp: false, pass1Id: nil, verdictNonce: nil))
                statuses.append(r.status)
            }
            XCTAssertEqual(Array(statuses.prefix(5)), [200, 200, 200, 200, 200], "\(statuses)")
            XCTAssertEqual(Array(statuses.suffix(3)), [429, 429, 429], "\(statuses)")
            // Her direct logins (no WID) are not counted.
            let direct = try await mallory.authenticate(pin: "2222")
            XCTAssertEqual(direct, 200)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// A refused time permit is signed over the nonce a host sends with it, in the "revoked"
    /// context; without a nonce (the original SDK) the refusal is as before.
    func testRefusedTimePermitIsSignedOverTheHostsNonce() async throws {
        let server = try await TestServer(storage: .sqlite)
        try await server.start()
        do {
            var alice = MPinTestClient(http: server.client)
            try await alice.registerFully("alice@example.org", pin: "1234")
            let settings = try await server.client.get("/rps/clientSettings").decode(ClientSettings.self)
            let key = try XCTUnwrap(settings.verdictKey)
            let nonce = try SystemRandom.bytes(Verdict.nonceSize)
            let query = "?\(Verdict.nonceParameter)=\(Hex.encode(nonce))"
            let allowed = try await server.client.get("/rps/timePermit/\(alice.mpinIDHex)\(query)")
            XCTAssertEqual(allowed.status, 200)

            try await server.admin().revoke(userID: "alice@example.org")
            let refused = try await server.client.get("/rps/timePermit/\(alice.mpinIDHex)\(query)")
            XCTAssertEqual(refused.status, 410)
            let signature = refused.object?["verdictSignature"]?.string
            XCTAssertTrue(Verdict.verify(signature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID, userID: "alice@example.org",
                                         status: 410, context: Verdict.revokedContext))
            // Not a signature of anything else: another nonce, another context, another user.
            XCTAssertFalse(Verdict.verify(signature, publicKeyHex: key, nonce: try SystemRandom.bytes(32), mpinID: alice.mpinID,
                                          userID: "alice@example.org", status: 410, context: Verdict.revokedContext))
            XCTAssertFalse(Verdict.verify(signature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID, userID: "alice@example.org",
                                          status: 410, context: Verdict.tokenContext))
            let unsigned = try await server.client.get("/rps/timePermit/\(alice.mpinIDHex)")
            XCTAssertEqual(unsigned.status, 410)
            XCTAssertNil(unsigned.object?["verdictSignature"]?.string)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
