import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// docs/SECURITY.md §5, the server review's points on what an anonymous client could do to other
/// people's state: block a signer's key with a signed file, cancel an invitation by naming its
/// user, fill the registrations table; and what a relying party could do with an access token. Each
/// attacker here is a plain HTTP client with no credential or only a relying party's.
class ServerReviewTests: XCTestCase {
    /// The database the tests run on (`PostgresStorageTests.swift` runs them on PostgreSQL).
    class var storage: TestStorage { .sqlite }

    // MARK: DVS verification counts only what can be a PIN guess

    /// A registered user with an enrolled signing key, signing as the SDK does (docs/MFA.md §14).
    struct Signer {
        var login: MPinTestClient
        let secretKey: [UInt8]
        let publicKey: DVSPublicKey
        var signingMpinID: [UInt8] = []
        var token: [UInt8] = []
        var http: HTTPClient { login.http }

        init(login: MPinTestClient) throws {
            self.login = login
            (secretKey, publicKey) = try DVS.generateKeyPair()
        }

        var identity: [UInt8] { DVS.signingIdentity(mpinID: signingMpinID, publicKey: publicKey) }

        /// `dvsRegToken` with a PIN proof, `dvsregister`, the second share, the token for `signingPIN`.
        mutating func enrol(loginPIN: String, signingPIN: String) async throws {
            let (p2, _) = try await login.passes(pin: loginPIN)
            let t = try await http.post("/rps/dvsRegToken", AuthenticateRequest(mpinResponse: MPinResponse(p2)))
            XCTAssertEqual(t.status, 200, String(decoding: t.body, as: UTF8.self))
            let regToken = try t.decode(DVSRegisterTokenResponse.self).dvsRegisterToken
            let r = try await http.post("/rps/dvsregister", DVSRegisterRequest(publicKey: Hex.encode(publicKey.bytes),
                                                                              deviceName: "laptop", dvsRegisterToken: regToken))
            XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
            let answer = try r.decode(DVSRegisterResponse.self)
            signingMpinID = try XCTUnwrap(Hex.decode(answer.mpinId))
            let path = answer.cs2url.hasPrefix("http") ? String(answer.cs2url.dropFirst(http.base.count)) : answer.cs2url
            let c = try await http.get(path)
            XCTAssertEqual(c.status, 200, String(decoding: c.body, as: UTF8.self))
            let share2 = try c.decode(ClientSecretResponse.self).clientSecret
            let cs = try MPin.recombineG1(try XCTUnwrap(Hex.decode(answer.dvsClientSecretShare)), try XCTUnwrap(Hex.decode(share2)))
            let keyed = try DVS.keyedClientSecret(clientSecret: cs, secretKey: secretKey)
            token = try DVS.extractToken(signingIdentity: identity, pin: MPinTestClient.pinValue(signingPIN), keyedClientSecret: keyed)
        }

        /// A signature of `document` with `pin` (and `x`, when given), as `mpinctl sign` writes it.
        func sign(_ document: String, pin: String, time: Int32 = 1_750_000_000, x: [UInt8]? = nil) throws -> DVSSignatureMessage {
            let hash = MPinCrypto.SHA256.hash(Array(document.utf8))
            let s = try x.map { try DVS.sign(signingIdentity: identity, x: $0, pin: MPinTestClient.pinValue(pin), token: token,
                                             message: hash, timeValue: time) }
                ?? DVS.sign(signingIdentity: identity, pin: MPinTestClient.pinValue(pin), token: token, message: hash, timeValue: time)
            return DVSSignatureMessage(hash: Hex.encode(hash), mpinId: Hex.encode(signingMpinID), u: Hex.encode(s.u),
                                       v: Hex.encode(s.v), publicKey: Hex.encode(publicKey.bytes), timestamp: Int64(time))
        }
    }

    /// `dvsVerify` as anyone may call it: the status and, on 200, `valid`.
    static func verify(_ http: HTTPClient, _ signature: DVSSignatureMessage) async throws -> String {
        let r = try await http.post("/rps/dvsVerify", signature)
        guard r.status == 200 else { return "\(r.status)" }
        return try r.decode(DVSVerifyResponse.self).valid ? "valid" : "invalid"
    }

    func enrolledSigner(_ server: TestServer, _ user: String) async throws -> Signer {
        var login = MPinTestClient(http: server.client)
        try await login.registerFully(user, pin: "1234")
        var signer = try Signer(login: login)
        try await signer.enrol(loginPIN: "1234", signingPIN: "9876")
        return signer
    }

    /// Whoever holds one signed file (every `.mpinsig` names the signer's mpinId and key) can
    /// replay it and alter its hash, timestamp or V as often as he likes: each altered copy is
    /// "invalid", none counts, the genuine signature stays valid and the signer keeps signing.
    /// Before, the third altered copy blocked the key and the genuine one got 410.
    func testAThirdPartyHoldingASignedFileCannotBlockTheKeyNorSpoilTheSignature() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            let signer = try await enrolledSigner(server, "sam@example.com")
            var x = try SystemRandom.scalar()
            let genuine = try signer.sign("Change request 42", pin: "9876", x: x)
            // The signer's client checks every signature it makes (docs/MFA.md §14.3).
            let made = try await Self.verify(signer.http, genuine)
            XCTAssertEqual(made, "valid")

            let anyone = HTTPClient(base: server.client.base)
            var outcomes: [String] = []
            for round in 0..<4 {
                var hash = genuine, time = genuine, v = genuine
                hash.hash = Hex.encode(MPinCrypto.SHA256.hash(Array("Change request 43 \(round)".utf8)))
                time.timestamp += Int64(round + 1)
                v.v = genuine.u
                for altered in [hash, time, v] { outcomes.append(try await Self.verify(anyone, altered)) }
                outcomes.append(try await Self.verify(anyone, genuine))
            }
            XCTAssertEqual(outcomes, Array(repeating: ["invalid", "invalid", "invalid", "valid"], count: 4).flatMap { $0 },
                           "altered copies are invalid and counted nowhere; the genuine one stays valid")

            // Even someone who knew the signing PIN and U's x gets nothing from a seen U: a
            // signature of another message under it is answered "invalid" without the pairing
            // check, so a seen U is no oracle on the PIN.
            let sameU = try signer.sign("Change request 44", pin: "9876", x: x)
            x.wipe()
            let sameUOutcome = try await Self.verify(anyone, sameU)
            XCTAssertEqual(sameUOutcome, "invalid")

            // The key is not blocked: the signer signs something new.
            let next = try await Self.verify(signer.http, try signer.sign("Change request 45", pin: "9876"))
            XCTAssertEqual(next, "valid")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// The counter's purpose stays: a thief holding the signing token (not the PIN) makes a
    /// fresh U for each guess, and the third wrong one blocks the key; replaying a genuine
    /// signature between guesses does not reset the count (before, it did, which made
    /// verification an unbounded oracle). A signature seen valid before the block still
    /// verifies after it; the thief's right PIN, after the block, gets 410.
    func testAStolenSigningTokenStillGetsThreeGuessesOnly() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            let signer = try await enrolledSigner(server, "tia@example.com")
            let genuine = try signer.sign("Invoice 7", pin: "9876")
            let made = try await Self.verify(signer.http, genuine)
            XCTAssertEqual(made, "valid")

            let thief = HTTPClient(base: server.client.base)
            var outcomes: [String] = []
            for guess in ["0000", "1111"] {
                outcomes.append(try await Self.verify(thief, try signer.sign("Invoice 8", pin: guess)))
                outcomes.append(try await Self.verify(thief, genuine))
            }
            outcomes.append(try await Self.verify(thief, try signer.sign("Invoice 8", pin: "2222")))
            outcomes.append(try await Self.verify(thief, try signer.sign("Invoice 8", pin: "9876")))
            outcomes.append(try await Self.verify(thief, genuine))
            XCTAssertEqual(outcomes, ["invalid", "valid", "invalid", "valid", "410", "410", "valid"])
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    // MARK: Wrong registration codes void no invitation; guessing is throttled

    /// `RegCodeGuessLimit`'s default: wrong codes per source and minute (overall ten times that).
    static let wrongCodesPerSource = 10

    /// Wrong codes for alice's user id from an anonymous client leave her invitation usable;
    /// a source at its limit of wrong codes gets 429 without its code being judged.
    /// Before, the third wrong code deleted every code alice had.
    func testWrongCodesFromAnonymousClientsVoidNoInvitation() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.verification = .code }
        try await server.start()
        do {
            let admin = try await server.admin()
            let invitation = try await admin.invite(userID: "alice@example.com", ttlSeconds: 3600)
            let anyone = HTTPClient(base: server.client.base)
            func register(_ user: String, _ code: String) async throws -> Int {
                try await anyone.put("/rps/user", RegisterRequest(userId: user, mobile: 1, regCode: code)).status
            }
            var wrong: [Int] = []
            for i in 0..<(Self.wrongCodesPerSource - 1) {
                wrong.append(try await register("alice@example.com", String(format: "%012d", 100_000_000_000 + i)))
            }
            XCTAssertEqual(wrong, Array(repeating: 403, count: Self.wrongCodesPerSource - 1))
            let alice = try await server.client.put("/rps/user", RegisterRequest(userId: "alice@example.com", mobile: 1,
                                                                                  regCode: invitation))
            XCTAssertEqual(alice.status, 200, "the invitation survives wrong codes it was never shown")
            XCTAssertTrue(try alice.decode(RegisterResponse.self).active)

            // The source's limit: its tenth wrong code in the minute is judged, the next try is not.
            let bob = try await admin.invite(userID: "bob@example.com", ttlSeconds: 3600)
            let tenth = try await register("bob@example.com", "999999999999")
            let throttled = try await register("bob@example.com", "999999999998")
            let rightButThrottled = try await register("bob@example.com", bob)
            XCTAssertEqual([tenth, throttled, rightButThrottled], [403, 429, 429])
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// The overall limit, which many source addresses (127.0.0.0/8 here) do not multiply: ten
    /// sources' worth of wrong codes a minute are judged, then every source gets 429.
    func testWrongRegistrationCodesFromManyAddressesMeetTheOverallLimit() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.verification = .code }
        try await server.start()
        do {
            let port = try XCTUnwrap(server.running?.port)
            var statuses: [Int: Int] = [:]
            for host in 2..<14 {
                for i in 0..<Self.wrongCodesPerSource {
                    let status = try RawSocket.put(port: port, from: "127.0.0.\(host)", "/rps/user",
                                                   #"{"userId": "carol@example.com", "mobile": 1, "regCode": "\#(String(format: "%012d", host * 100 + i))"}"#)
                    statuses[status, default: 0] += 1
                }
            }
            XCTAssertEqual(statuses, [403: 10 * Self.wrongCodesPerSource, 429: 2 * Self.wrongCodesPerSource])
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    // MARK: Pending registrations are bounded

    /// An anonymous client's registrations for one identity keep at most
    /// `maxPendingPerUser` pending, and a wrong activation code stores nothing. Before, each
    /// request stored one for an hour (3,000 requests, 3,000 entries for alice).
    func testPendingRegistrationsAreBoundedAndAWrongActivationCodeStoresNothing() async throws {
        let server = try await TestServer(autoActivate: false, storage: Self.storage) { $0.verification = .code }
        try await server.start()
        do {
            let admin = try await server.admin()
            _ = try await admin.add(userID: "alice@example.com")
            let anyone = HTTPClient(base: server.client.base)
            var refused: [Int] = []
            for i in 0..<3 {
                refused.append(try await anyone.put("/rps/user", RegisterRequest(userId: "alice@example.com", mobile: 1,
                                                                                  activateCode: "00000000000\(i)")).status)
            }
            XCTAssertEqual(refused, [403, 403, 403])
            let afterWrongCodes = try await admin.pending(userID: "alice@example.com").count
            XCTAssertEqual(afterWrongCodes, 0, "a wrong activation code stores nothing")

            let started = Date()
            let flood = 300
            for _ in 0..<flood {
                let r = try await anyone.put("/rps/user", RegisterRequest(userId: "alice@example.com", mobile: 1))
                XCTAssertEqual(r.status, 200)
            }
            let seconds = Date().timeIntervalSince(started)
            let kept = try await admin.pending(userID: "alice@example.com").count
            print("ServerReviewTests: \(flood) registrations for one identity in \(String(format: "%.2f", seconds)) s; \(kept) kept")
            XCTAssertEqual(kept, 10, "the newest maxPendingPerUser are kept")

            // Per source: 100 other identities from the same address push alice's out.
            for i in 0..<100 {
                let r = try await anyone.put("/rps/user", RegisterRequest(userId: "user-\(i)@example.com", mobile: 1))
                XCTAssertEqual(r.status, 200)
            }
            let aliceAfter = try await admin.pending(userID: "alice@example.com").count
            let newest = try await admin.pending(userID: "user-99@example.com").count
            XCTAssertEqual([aliceAfter, newest], [0, 1], "at most maxPendingPerSource per address, the oldest dropped")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}

extension RawSocket {
    /// One PUT of a JSON body from the source address `from`; the status, 0 when there was no answer.
    static func put(port: Int, from source: String, _ path: String, _ json: String) throws -> Int {
        let s = try RawSocket(port: port, from: source)
        defer { s.close() }
        s.send("PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               + "Content-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n" + json)
        _ = s.isClosed(within: 5)
        let line = String(decoding: s.received.prefix(32), as: UTF8.self)
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }
}

// MARK: An OIDC access token enrols no signing key

extension OIDCFlowTests {
    /// A relying party the user logs in to gets an access token; it reads userinfo with it but
    /// cannot enrol a signing key for the user (before, `dvsregister` took it: 200).
    func testAnAccessTokenEnrolsNoSigningKey() async throws {
        let f = try await fixture()
        do {
            let (code, verifier) = try await authorizationCode(f)
            let t = try await token(f, code: code, verifier: verifier)
            XCTAssertEqual(t.status, 200, String(decoding: t.body, as: UTF8.self))
            let accessToken = try XCTUnwrap(t.object?["access_token"]?.string)
            let (_, pa) = try DVS.generateKeyPair()
            let enrol = try await f.http.post("/rps/dvsregister", DVSRegisterRequest(
                publicKey: Hex.encode(pa.bytes), deviceName: "relying party", dvsRegisterToken: accessToken))
            XCTAssertEqual(enrol.status, 403, "an access token is no DVS registration token")
            let info = try await f.http.send("GET", "/oidc/userinfo", headers: ["Authorization": "Bearer " + accessToken])
            XCTAssertEqual(info.status, 200, "it still reads userinfo")
            XCTAssertEqual(info.object?["sub"]?.string, "alice@example.com")
        } catch { await f.server.shutdown(); throw error }
        await f.server.shutdown()
    }
}
