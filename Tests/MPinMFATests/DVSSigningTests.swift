import Foundation
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinServer
import MPinPostgresTestSupport
import MPinWire
import XCTest

/// Designated verifier signatures (the seeds' DVS methods, docs/MFA.md §14) against mpin-server
/// over HTTP: enrolment with a token from a PIN authentication (not the OIDC access token),
/// signing with a separate signing PIN (and second factor), verification by the relying party,
/// wrong signing PINs counted and the key blocked, and the stored tokens.
class DVSSigningTests: XCTestCase {
    var server: MFAServer!
    /// The fresh PostgreSQL database of the *PostgresTests variant, dropped by tearDown.
    var postgresDatabase: String?
    /// Whether the server keeps its state in PostgreSQL (DVSSigningPostgresTests).
    class var onPostgres: Bool { false }

    override func setUp() async throws {
        if Self.onPostgres {
            let (name, url) = try await TestPostgres.createDatabase()
            postgresDatabase = name
            server = try await MFAServer { $0.database = url }
        } else {
            server = try await MFAServer()
        }
    }
    override func tearDown() async throws {
        await server?.stop()
        if let postgresDatabase { try? await TestPostgres.dropDatabase(postgresDatabase) }
    }

    /// A registered user (login PIN 1234) enrolled for signing with `signingPIN` and `nfc`; the
    /// statuses of StartRegistrationDVS and FinishRegistrationDVS.
    private static func enrolled(_ server: MFAServer, _ mfa: MPinMFA, _ id: String, signingPIN: String = "9876",
                                 nfc: String = "") -> (MPinUser, [MPinStatus.Code]) {
        let (user, _) = server.registered(mfa, id)
        let start = mfa.startRegistrationDVS(user, pin0: secret("1234"), pin1: SecretBytes())
        let finish = mfa.finishRegistrationDVS(user, pinDVS: secret(signingPIN), nfc: secret(nfc))
        return (user, [start.code, finish.code])
    }

    /// The OIDC access token a relying party redeems after `user` (login PIN 1234) signs in
    /// through the code flow; the SDK has the app's client id set.
    private static func accessToken(_ server: MFAServer, _ mfa: MPinMFA, _ user: MPinUser) -> String {
        guard let p = try? MFAServer.pkce() else { XCTFail("no PKCE pair"); return "" }
        let (_, accessCode) = mfa.getAccessCode(authzURL: server.authorizationURL(challenge: p.challenge))
        _ = mfa.startAuthentication(user, accessCode: accessCode)
        let (_, authzCode) = mfa.finishAuthenticationAuthzCode(user, pin0: secret("1234"), pin1: SecretBytes(), accessCode: accessCode)
        return server.redeemTokens(code: authzCode, verifier: p.verifier).accessToken
    }

    private static let document = "Change request 42: open port 443 on web-1"

    func testEnrolSignAndVerify() async throws {
        let server = self.server!
        let r = await blocking { () -> ([MPinStatus.Code], [Bool], MPinSignature, (MPinStatus.Code, Bool, String), [Bool]) in
            let mfa = server.sdk()
            let (fresh, _) = server.registered(mfa, "signer@example.org")
            // Before enrolment: no signing.
            let before = [fresh.canSign]
            let refused = mfa.sign(fresh, documentHash: [1, 2, 3], pin0: secret("9876"), pin1: SecretBytes(), epochTime: 1).status.code
            XCTAssertEqual(mfa.deleteUser(fresh).code, .ok)
            let (user, steps) = Self.enrolled(server, mfa, "signer@example.org")
            let hash = MPinCrypto.SHA256.hash(Array(Self.document.utf8))
            let (s, signature) = mfa.sign(user, documentHash: hash, pin0: secret("9876"), pin1: SecretBytes(), epochTime: 1_750_000_000)
            // A new SDK over the same store still can sign; the relying party verifies.
            let reloaded = server.sdk()
            let again = reloaded.listUsers().first { $0.id == "signer@example.org" }
            let rp = reloaded.verifySignature(signature.message, server: server.backend)
            var changed = signature.message
            changed.hash = Hex.encode(MPinCrypto.SHA256.hash(Array((Self.document + ".").utf8)))
            var otherTime = signature.message
            otherTime.timestamp += 1
            var otherKey = signature.message
            otherKey.publicKey = Hex.encode(try! DVS.generateKeyPair().publicKey.bytes)
            let tampered = [changed, otherTime, otherKey].map { reloaded.verifySignature($0, server: server.backend).valid }
            return ([refused] + steps + [s.code], before + [user.canSign, again?.canSign ?? false, mfa.verifyDocument(Self.document, hash: hash),
                                                             mfa.verifyDocument(Self.document + " ", hash: hash)],
                    signature, (rp.status.code, rp.valid, rp.userId), tampered)
        }
        XCTAssertEqual(r.0, [.flowError, .ok, .ok, .ok])
        XCTAssertEqual(r.1, [false, true, true, true, false])
        XCTAssertEqual(r.2.hash, MPinCrypto.SHA256.hash(Array(Self.document.utf8)))
        XCTAssertEqual([r.2.u.count, r.2.v.count, r.2.publicKey.count], [65, 65, 128])
        XCTAssertEqual(r.2.timestamp, 1_750_000_000)
        XCTAssertEqual(String(decoding: r.2.mpinId, as: UTF8.self).contains("\"userID\": \"signer@example.org\""), true)
        XCTAssertEqual(r.3.0, .ok)
        XCTAssertTrue(r.3.1)
        XCTAssertEqual(r.3.2, "signer@example.org")
        XCTAssertEqual(r.4, [false, false, false], "a changed hash, time or public key does not verify")
    }

    func testWrongSigningPINIsCountedAndBlocksTheKeyNotTheLogin() async throws {
        let server = self.server!
        let r = await blocking { () -> ([MPinStatus.Code], [Bool], MPinStatus.Code, [MPinStatus.Code]) in
            let mfa = server.sdk()
            let (user, steps) = Self.enrolled(server, mfa, "clumsy@example.org")
            let hash = MPinCrypto.SHA256.hash(Array("x".utf8))
            // The login PIN is not the signing PIN.
            var out = steps
            out.append(mfa.sign(user, documentHash: hash, pin0: secret("1234"), pin1: SecretBytes(), epochTime: 5).status.code)
            let good = mfa.sign(user, documentHash: hash, pin0: secret("9876"), pin1: SecretBytes(), epochTime: 6)
            out.append(good.status.code)  // resets the counter
            for _ in 0..<3 {
                out.append(mfa.sign(user, documentHash: hash, pin0: secret("0000"), pin1: SecretBytes(), epochTime: 7).status.code)
            }
            let canSign = [user.canSign, server.sdk().listUsers().first { $0.id == "clumsy@example.org" }?.canSign ?? true]
            // A signature made (and seen valid) before the block still verifies
            // (docs/SECURITY.md §5).
            let late = mfa.verifySignature(good.signature.message, server: server.backend).status.code
            let login = [mfa.startAuthenticationOTP(user).code, mfa.finishAuthenticationOTP(user, pin0: secret("1234")).status.code]
            return (out, canSign, late, login)
        }
        XCTAssertEqual(r.0, [.ok, .ok, .incorrectPIN, .ok, .incorrectPIN, .incorrectPIN, .incorrectPIN])
        XCTAssertEqual(r.1, [false, false], "the blocked signing key is forgotten")
        XCTAssertEqual(r.2, .ok, "a signature seen valid before the block still verifies")
        XCTAssertEqual(r.3, [.ok, .ok], "logins are not affected")
    }

    func testSecondFactorIsNeededToSign() async throws {
        let server = self.server!
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = server.sdk()
            let (user, steps) = Self.enrolled(server, mfa, "nfc@example.org", signingPIN: "2468", nfc: "card-0042")
            let hash = MPinCrypto.SHA256.hash(Array("y".utf8))
            return steps + [mfa.sign(user, documentHash: hash, pin0: secret("2468"), pin1: secret("card-0042"), epochTime: 9).status.code,
                            mfa.sign(user, documentHash: hash, pin0: secret("2468"), pin1: SecretBytes(), epochTime: 9).status.code]
        }
        XCTAssertEqual(r, [.ok, .ok, .ok, .incorrectPIN])
    }

    /// The seeds' StartRegistrationDVS(user, token) with the access token the relying party got
    /// at /oidc/token is refused (docs/SECURITY.md §5: any relying party gets one); the PIN proof
    /// enrols; the wrong states are FLOW_ERROR.
    func testTokensAndStates() async throws {
        let server = self.server!
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = server.sdk()
            mfa.setClientId(server.app.clientId)
            let (user, _) = server.registered(mfa, "oidc-signer@example.org")
            let token = Self.accessToken(server, mfa, user)
            var out = [mfa.finishRegistrationDVS(user, pinDVS: secret("1357"), nfc: SecretBytes()).code]  // nothing started
            out.append(mfa.startRegistrationDVS(user, token: token).code)            // an access token enrols nothing
            out.append(mfa.startRegistrationDVS(user, pin0: secret("1234"), pin1: SecretBytes()).code)
            out.append(mfa.finishRegistrationDVS(user, pinDVS: secret("1357"), nfc: SecretBytes()).code)
            out.append(mfa.startRegistrationDVS(user, token: "not-a-token").code)
            out.append(mfa.startRegistrationDVS(user, pin0: secret("1111"), pin1: SecretBytes()).code)  // wrong login PIN
            let pending = mfa.makeNewUser(id: "pending@example.org")
            out.append(mfa.startRegistrationDVS(pending, token: token).code)          // not REGISTERED
            out.append(mfa.sign(user, documentHash: [7], pin0: secret("1357"), pin1: SecretBytes(), epochTime: 3).status.code)
            return out
        }
        XCTAssertEqual(r, [.flowError, .identityNotAuthorized, .ok, .ok, .identityNotAuthorized, .incorrectPIN, .flowError, .ok])
    }

    /// After `user revoke` an access token issued before it enrols no signing key (no access token
    /// does, docs/SECURITY.md §5; that revocation drops unused DVS registration tokens is
    /// StorageContractTests' to show).
    func testRevocationVoidsAnUnusedDVSToken() async throws {
        let server = self.server!
        let r = await blocking { () -> [MPinStatus.Code] in
            let mfa = server.sdk()
            mfa.setClientId(server.app.clientId)
            let (user, _) = server.registered(mfa, "revoked-signer@example.org")
            let token = Self.accessToken(server, mfa, user)
            do { try server.revoke("revoked-signer@example.org") } catch { XCTFail("revoke: \(error)") }
            return [mfa.startRegistrationDVS(user, token: token).code,
                    mfa.finishRegistrationDVS(user, pinDVS: secret("1357"), nfc: SecretBytes()).code]
        }
        XCTAssertEqual(r, [.identityNotAuthorized, .flowError])
    }

    /// The signing token is stored apart from the authentication token; DeleteUser removes both.
    func testDeleteUserDeletesBothTokens() async throws {
        let server = self.server!
        let r = await blocking { () -> ([String], [String], MPinStatus.Code) in
            let mfa = server.sdk()
            let (user, _) = Self.enrolled(server, mfa, "leaver@example.org")
            let mpinIdHex = user.mpinIdHex
            func keys() -> [String] {
                guard let bytes = try? server.platform.secureStorage.read("tokens"), let doc = try? JSONParser().parse(bytes),
                      case .object(let members) = doc else { return [] }
                return members.map(\.key).filter { $0.hasSuffix(mpinIdHex) }.sorted()
            }
            let before = keys()
            let deleted = mfa.deleteUser(user).code
            return (before, keys(), deleted)
        }
        XCTAssertEqual(r.0.count, 2)
        XCTAssertEqual(r.0.filter { $0.hasPrefix("dvs-") }.count, 1, "the signing token has its own entry")
        XCTAssertEqual(r.2, .ok)
        XCTAssertEqual(r.1, [], "both tokens are gone")
    }

    /// Bad input to the DVS endpoints: a JSON 4xx, never a 5xx, and nothing enrolled.
    func testBadInputToTheEndpoints() async throws {
        let server = self.server!
        let notOnCurve = String(repeating: "01", count: 128)
        let cases: [(String, String, Int)] = [
            ("/rps/dvsregister", "{}", 400),
            ("/rps/dvsregister", "{\"publicKey\": \"\(notOnCurve)\", \"deviceName\": \"\", \"dvsRegisterToken\": \"t\"}", 400),
            ("/rps/dvsregister", "{\"publicKey\": \"zz\", \"deviceName\": \"\", \"dvsRegisterToken\": \"t\"}", 400),
            ("/rps/dvsRegToken", "{\"mpinResponse\": {}}", 400),
            ("/rps/dvsVerify", "not json", 400),
            ("/rps/dvsVerify", "{\"hash\": \"00\", \"mpinId\": \"00\", \"u\": \"00\", \"v\": \"00\", \"publicKey\": \"00\", \"timestamp\": 1}", 400),
            ("/rps/dvsVerify", "{\"hash\": \"00\", \"mpinId\": \"zz\", \"u\": \"00\", \"v\": \"00\", \"publicKey\": \"00\", \"timestamp\": 1}", 400),
        ]
        for (path, body, expected) in cases {
            let (status, json) = server.send(.post, path, body)
            XCTAssertEqual(status, expected, "\(path) \(body)")
            XCTAssertNotNil(json["message"]?.stringValue, "a JSON error for \(path)")
        }
        // A well-formed signature for a key nobody enrolled: 404.
        let (_, pa) = try DVS.generateKeyPair()
        let g = try G1Point.generator.encoded()
        let unknown = DVSSignatureMessage(hash: "aa", mpinId: Hex.encode(Array("{\"userID\": \"x\"}".utf8)), u: Hex.encode(g),
                                          v: Hex.encode(g), publicKey: Hex.encode(pa.bytes), timestamp: 1)
        let (status, _) = server.send(.post, "/rps/dvsVerify", String(decoding: try WireCoding.encode(unknown), as: UTF8.self))
        XCTAssertEqual(status, 404)
    }
}
