import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// Access numbers for logins approved from a device (PROTOCOL.md §5.7), over real HTTP.
class DeviceLoginTests: XCTestCase {
    /// The database the tests run on (`PostgresStorageTests.swift` runs them on PostgreSQL).
    class var storage: TestStorage { .sqlite }

    private func accessNumber(_ server: TestServer, description: String?, verdictNonce: [UInt8]? = nil) async throws -> HTTPResult {
        let body = try description.map {
            try JSONEncoder().encode(AccessNumberRequest(description: $0, verdictNonce: verdictNonce.map(Hex.encode)))
        }
        return try await server.client.send("POST", "/rps/getAccessNumber", body: body)
    }

    func testDescriptionIsShownForALiveNumberAndRefusedWhenMalformed() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            let text = "host db1, user alice, service sshd — ünïcode"
            let issued = try await accessNumber(server, description: text)
            XCTAssertEqual(issued.status, 200)
            let an = try issued.decode(AccessNumberResponse.self)
            let details = try await server.client.get("/rps/accessnumber/\(an.accessNumber)")
            XCTAssertEqual(details.status, 200, String(decoding: details.body, as: UTF8.self))
            let d = try details.decode(AccessNumberDetailsResponse.self)
            XCTAssertEqual(d.description, text)
            XCTAssertEqual(d.accessNumber, an.accessNumber)
            XCTAssertTrue((1...65).contains(d.ttlSeconds), "\(d.ttlSeconds)")

            // Without a body (a browser) the description is empty.
            let plain = try await accessNumber(server, description: nil).decode(AccessNumberResponse.self)
            let plainDetails = try await server.client.get("/rps/accessnumber/\(plain.accessNumber)").decode(AccessNumberDetailsResponse.self)
            XCTAssertEqual(plainDetails.description, "")

            for bad in ["line\nbreak", "tab\there", "esc\u{1B}[31m", "del\u{7F}", "c1\u{85}", "bidi\u{202E}txt",
                        String(repeating: "x", count: AccessNumberDescription.maxScalars + 1)] {
                let r = try await accessNumber(server, description: bad)
                XCTAssertEqual(r.status, 400, "\(bad.debugDescription): \(String(decoding: r.body, as: UTF8.self))")
            }
            let longest = try await accessNumber(server, description: String(repeating: "é", count: AccessNumberDescription.maxScalars))
            XCTAssertEqual(longest.status, 200)
            let notJSON = try await server.client.send("POST", "/rps/getAccessNumber", body: Data("{".utf8))
            XCTAssertEqual(notJSON.status, 400)

            // Unknown and malformed numbers.
            let unknown = try await server.client.get("/rps/accessnumber/4241703")
            XCTAssertEqual(unknown.status, an.accessNumber == "4241703" ? 200 : 404)
            let malformed = try await server.client.get("/rps/accessnumber/12345")
            XCTAssertEqual(malformed.status, 400)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// docs/SECURITY.md §6.7: access numbers are limited per requester (client address and
    /// description), so that 30 failing logins for alice through a PAM host (which asks for
    /// every user of its own) leave bob's login alone; the address as a whole gets ten times the
    /// limit; look-ups have their own per-address limit.
    func testAccessNumbersAreRateLimitedPerRequester() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.accessNumberRequestsPerMinute = 3 }
        try await server.start()
        do {
            var alice: [Int] = []
            for _ in 0..<4 { alice.append(try await accessNumber(server, description: "host h, user alice, service sshd").status) }
            XCTAssertEqual(alice, [200, 200, 200, 429])
            let bob = try await accessNumber(server, description: "host h, user bob, service sshd")
            XCTAssertEqual(bob.status, 200, "another user of the same host is not limited by alice's attempts")
            var others: [Int] = []
            for i in 0..<30 { others.append(try await accessNumber(server, description: "host h, user u\(i), service sshd").status) }
            XCTAssertEqual(others.filter { $0 == 200 }.count, 26, "the address's limit: 10 × 3, 4 already used")
            XCTAssertEqual(others.last, 429)
            var lookups: [Int] = []
            for _ in 0..<4 { lookups.append(try await server.client.get("/rps/accessnumber/4241703").status) }
            XCTAssertEqual(lookups, [404, 404, 404, 429])
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testOutOfRangeRateLimitIsRefusedAtStart() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.accessNumberRequestsPerMinute = 0 }
        do {
            try await server.start()
            XCTFail("started with accessNumberRequestsPerMinute = 0")
            await server.stop()
        } catch let error as SetupError {
            XCTAssertEqual(error, .invalidSetting(server.dataDir + "/config.json", "accessNumberRequestsPerMinute"))
        }
        await server.shutdown()
    }

    /// The requester polls, then completes the login with the RPA's private step, which names
    /// the identity that approved; a second approval of the same number is refused, and the
    /// number's description is no longer shown.
    func testApprovalIsSingleUseAndNamesTheApprovingIdentity() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.mobileWaitSeconds = 5 }
        try await server.start()
        do {
            let client = server.client!
            var alice = MPinTestClient(http: client)
            try await alice.registerFully("alice@example.org", pin: "1111")
            var mallory = MPinTestClient(http: client)
            try await mallory.registerFully("mallory@example.org", pin: "2222")
            let nonce = try SystemRandom.bytes(32)
            let description = "host h, user alice, service sshd"
            let an = try await accessNumber(server, description: description, verdictNonce: nonce).decode(AccessNumberResponse.self)

            // A wrong PIN does not use the number up: the user may try again.
            let (wrong, _) = try await alice.passes(pin: "0000", wid: an.accessNumber)
            let wrongResult = try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(wrong)))
            XCTAssertEqual(wrongResult.status, 401)
            let stillLive = try await client.get("/rps/accessnumber/\(an.accessNumber)").status
            XCTAssertEqual(stillLive, 200)

            let (p2, _) = try await alice.passes(pin: "1111", wid: an.accessNumber)
            let device = Task { try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2))) }
            var authOTT: String? = nil
            for _ in 0..<50 where authOTT == nil {
                let poll = try await client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT))
                if poll.status == 200 { authOTT = try poll.decode(AccessNumberPollResponse.self).authOTT }
                else { try await Task.sleep(nanoseconds: 50_000_000) }
            }
            let ott = try XCTUnwrap(authOTT)
            // Approved: the description is gone, and a second device cannot approve the number.
            let gone = try await client.get("/rps/accessnumber/\(an.accessNumber)").status
            XCTAssertEqual(gone, 404)
            let (second, _) = try await mallory.passes(pin: "2222", wid: an.accessNumber)
            let secondResult = try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(second)))
            XCTAssertEqual(secondResult.status, 412)
            let (again, _) = try await alice.passes(pin: "1111", wid: an.accessNumber)
            let againResult = try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(again)))
            XCTAssertEqual(againResult.status, 412)

            let step = try await client.post("/authenticate", TokenAuthenticateRequest(
                authOTT: ott, logoutData: LogoutData(userId: "alice@example.org", sessionToken: "00"), webOTT: an.webOTT))
            XCTAssertEqual(step.status, 200)
            let verdict = try step.decode(TokenAuthenticateResponse.self)
            XCTAssertEqual(verdict.userId, "alice@example.org")
            XCTAssertEqual(verdict.mpinId, alice.mpinIDHex)
            // Signed for the requester that holds the webOTT (PROTOCOL.md §4.5.1): over its nonce,
            // this access number and its description, and nothing else.
            let settings = try await client.get("/rps/clientSettings").decode(ClientSettings.self)
            let key = try XCTUnwrap(settings.verdictKey)
            func verifies(nonce: [UInt8], accessNumber: String, description: String) -> Bool {
                Verdict.verify(verdict.verdictSignature, publicKeyHex: key, nonce: nonce, mpinID: alice.mpinID,
                               userID: "alice@example.org", status: 200,
                               context: Verdict.deviceContext(accessNumber: accessNumber, description: description))
            }
            XCTAssertTrue(verifies(nonce: nonce, accessNumber: an.accessNumber, description: description))
            XCTAssertFalse(verifies(nonce: try SystemRandom.bytes(32), accessNumber: an.accessNumber, description: description))
            XCTAssertFalse(verifies(nonce: nonce, accessNumber: "1234567", description: description))
            XCTAssertFalse(verifies(nonce: nonce, accessNumber: an.accessNumber, description: "host h, user alice, service su"))
            let deviceResult = try await device.value
            XCTAssertEqual(deviceResult.status, 200, String(decoding: deviceResult.body, as: UTF8.self))
            // The requester's step is single use too.
            let replay = try await client.post("/authenticate", TokenAuthenticateRequest(authOTT: ott))
            XCTAssertEqual(replay.status, 408)
            let polled = try await client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT)).status
            XCTAssertEqual(polled, 401)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// docs/SECURITY.md §5, "Starve a host's device logins": 330 unauthenticated requests under 11
    /// made-up remote hosts (the description carries PAM_RHOST) spend the anonymous budget of the
    /// address; a host whose key the server certified at an approved login still gets its numbers,
    /// and nobody can spend its budget with a replay, a made-up key or its certificate under
    /// another key.
    /// `mpin-server host certify`: the administrator's certificate of a host key is the one an
    /// approved login would give (the verdict key's signature, with an expiry), for that key only;
    /// what is not a host key, or a lifetime out of range, gets none.
    func testAnAdministratorCertifiesAHostKey() async throws {
        let server = try await TestServer(storage: .sqlite)
        do {
            let directory = DataDirectory(path: server.dataDir)
            let host = try Schnorr.generateKeyPair()
            let certificate = try directory.certifyHostKey(Hex.encode(host.publicKey).uppercased(), days: 30)
            let serverKey = try XCTUnwrap(Hex.decode(try directory.verdictPublicKey()))
            let now = Int(Date().timeIntervalSince1970)
            let expires = try XCTUnwrap(HostCredential.certificateExpiry(certificate, hostKey: host.publicKey, serverKey: serverKey, now: now))
            XCTAssertEqual(Double(expires - now), 30 * 86_400, accuracy: 5)
            let other = try Schnorr.generateKeyPair()
            XCTAssertNil(HostCredential.certificateExpiry(certificate, hostKey: other.publicKey, serverKey: serverKey, now: now),
                         "for that host key only")
            XCTAssertThrowsError(try directory.certifyHostKey("0123abcd", days: 30))
            XCTAssertThrowsError(try directory.certifyHostKey(Hex.encode(host.publicKey), days: 0))
            XCTAssertThrowsError(try directory.certifyHostKey(Hex.encode(host.publicKey), days: 366))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testAnonymousFloodDoesNotStarveACertifiedHost() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.mobileWaitSeconds = 5 }
        try await server.start()
        do {
            let client = server.client!
            var alice = MPinTestClient(http: client)
            try await alice.registerFully("alice@example.org", pin: "1111")
            let host = try Schnorr.generateKeyPair()
            let description = "host h, user alice, service sshd"

            // The host's first login: anonymous; the approval certifies its key.
            let an = try await accessNumber(server, description: description).decode(AccessNumberResponse.self)
            let (p2, _) = try await alice.passes(pin: "1111", wid: an.accessNumber)
            let device = Task { try await client.post("/rps/authenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2))) }
            var authOTT: String? = nil
            for _ in 0..<50 where authOTT == nil {
                let poll = try await client.post("/rps/accessnumber", AccessNumberPollRequest(webOTT: an.webOTT))
                if poll.status == 200 { authOTT = try poll.decode(AccessNumberPollResponse.self).authOTT }
                else { try await Task.sleep(nanoseconds: 50_000_000) }
            }
            let step = try await client.post("/authenticate", TokenAuthenticateRequest(
                authOTT: try XCTUnwrap(authOTT), logoutData: LogoutData(userId: "alice@example.org", sessionToken: "00"),
                webOTT: an.webOTT, hostKey: Hex.encode(host.publicKey)))
            XCTAssertEqual(step.status, 200)
            _ = try await device.value
            let certificate = try XCTUnwrap(step.decode(TokenAuthenticateResponse.self).hostCertificate)
            let settings = try await client.get("/rps/clientSettings").decode(ClientSettings.self)
            let serverKey = try XCTUnwrap(Hex.decode(try XCTUnwrap(settings.verdictKey)))
            let now = Int(Date().timeIntervalSince1970)
            XCTAssertNotNil(HostCredential.certificateExpiry(certificate, hostKey: host.publicKey, serverKey: serverKey, now: now))

            // The flood, as the review ran it.
            var flood: [Int: Int] = [:]
            let floodStart = Date()
            for i in 0..<330 {
                let status = try await accessNumber(server, description: "host h, user root, service sshd, from 203.0.113.\(i % 11)").status
                flood[status, default: 0] += 1
            }
            let floodTime = Date().timeIntervalSince(floodStart)
            XCTAssertEqual(flood[429], 31, "the anonymous budget of the address is spent: \(flood)")
            let anonymous = try await accessNumber(server, description: description).status
            XCTAssertEqual(anonymous, 429)

            func signed(_ key: (secretKey: [UInt8], publicKey: [UInt8]), certificate: String, user: String = "alice",
                        remote: String = "", time: Int? = nil) throws -> AccessNumberRequest {
                try HostCredential.signed(AccessNumberRequest(description: description + remote,
                                                              verdictNonce: Hex.encode(try SystemRandom.bytes(32))),
                                          secretKey: key.secretKey, publicKey: key.publicKey, certificate: certificate,
                                          user: user, timeMillis: time ?? Int(Date().timeIntervalSince1970 * 1000))
            }
            func send(_ r: AccessNumberRequest) async throws -> Int {
                try await client.send("POST", "/rps/getAccessNumber", body: try JSONEncoder().encode(r)).status
            }
            let request = try signed(host, certificate: certificate)
            let real = try await send(request)
            XCTAssertEqual(real, 200, "the certified host still gets a number")
            let replayed = try await send(request)
            XCTAssertEqual(replayed, 429, "a replayed request counts as anonymous")
            let stale = try await send(try signed(host, certificate: certificate, time: (now - 120) * 1000))
            XCTAssertEqual(stale, 429, "a request signed two minutes ago counts as anonymous")
            let madeUp = try Schnorr.generateKeyPair()
            let stolen = try await send(try signed(madeUp, certificate: certificate))
            XCTAssertEqual(stolen, 429, "another key with the host's certificate counts as anonymous")
            let forged = try await send(try signed(madeUp, certificate: try HostCredential.certificate(
                hostKey: madeUp.publicKey, expires: now + 3600, secretKey: madeUp.secretKey)))
            XCTAssertEqual(forged, 429, "a certificate the server did not sign counts as anonymous")
            // The host's own limits: 30 a minute per user (one used above), whatever remote host
            // the descriptions name (a flood of logins at the host itself spends that user's only).
            var own: [Int] = []
            let ownStart = Date()
            for i in 0..<30 { own.append(try await send(try signed(host, certificate: certificate, remote: ", from 203.0.113.\(i % 11)"))) }
            print(String(format: "# getAccessNumber: anonymous %.2f ms, certified host %.2f ms (signing and both checks) per request",
                         floodTime * 1000 / 330, Date().timeIntervalSince(ownStart) * 1000 / 30))
            XCTAssertEqual(own.filter { $0 == 200 }.count, 29)
            XCTAssertEqual(own.last, 429)
            let otherUser = try await send(try signed(host, certificate: certificate, user: "bob"))
            XCTAssertEqual(otherUser, 200, "another user of the host has a budget of its own")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
