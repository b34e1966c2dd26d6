import MPinCrypto
import XCTest

/// The second factor pin1 of docs/MFA.md §10: f1's mapping, the two-factor token and proof,
/// and that an empty pin1 leaves the Milagro token as it was.
final class SecondFactorTests: XCTestCase {
    private func mpinID(_ user: String) -> [UInt8] { Array("{\"userID\": \"\(user)\", \"mobile\": 1}".utf8) }
    private func secret(_ s: String) -> SecretBytes { SecretBytes(copying: s.utf8) }
    private func f1(_ id: [UInt8], _ pin1: String) -> [UInt8] {
        MPin.secondFactorValue(mpinID: id, pin1: secret(pin1)).withTemporaryArray { $0 }
    }

    func testF1IsTheDocumentedHashReducedModR() throws {
        // docs/MFA.md §10 computed with OpenSSL's SHA-256 and BIGNUM reduction.
        let id = mpinID("alice@example.org")
        let pin1 = "correct horse battery staple"
        let input = Array("MPIN-PIN1".utf8) + [0] + openSSLSHA256(id) + Array(pin1.utf8)
        let expected = try OpenSSLMod.reduceWide(openSSLSHA256(input), BN254ScalarModulus.modulus, BNContext())
        XCTAssertEqual(f1(id, pin1), expected.bigEndianBytes)
        XCTAssertEqual(f1(id, pin1), f1(id, pin1), "deterministic")
    }

    func testF1SeparatesIdentitiesAndValues() {
        let alice = mpinID("alice@example.org"), bob = mpinID("bob@example.org")
        XCTAssertNotEqual(f1(alice, "9876"), f1(bob, "9876"), "the same pin1 maps differently for another identity")
        XCTAssertNotEqual(f1(alice, "9876"), f1(alice, "9877"))
        XCTAssertNotEqual(f1(alice, "9876"), [UInt8](repeating: 0, count: 32))
        XCTAssertEqual(f1(alice, ""), [UInt8](repeating: 0, count: 32), "an empty pin1 is f1 = 0")
    }

    func testEmptyPin1GivesTheMilagroToken() throws {
        let id = mpinID("carol@example.org")
        let cs = try MPin.clientSecret(masterSecret: try MPin.randomMasterSecret(), hashedID: MPin.hashID(id))
        let milagro = try MPin.extractPIN(mpinID: id, pin: MPin.sdkPINValue(Array("2468".utf8)), clientSecret: cs)
        let twoFactor = try MPin.extractPIN(mpinID: id, pin0: secret("2468"), pin1: SecretBytes(),
                                            clientSecret: SecretBytes(copying: cs))
        XCTAssertEqual(twoFactor.withTemporaryArray { $0 }, milagro, "bit-identical to the Milagro token")
        let withPin1 = try MPin.extractPIN(mpinID: id, pin0: secret("2468"), pin1: secret("x"),
                                           clientSecret: SecretBytes(copying: cs))
        XCTAssertNotEqual(withPin1.withTemporaryArray { $0 }, milagro)
    }

    /// TOKEN + (f0 + f1)·A is the client secret again: the token is CS − (f0 + f1)·A.
    func testTheTokenFoldsOutBothFactors() throws {
        let id = mpinID("dave@example.org")
        let s = Fr(UInt256(bigEndian: try MPin.randomMasterSecret())!)
        let cs = try MPin.clientSecret(masterSecret: s.bytes, hashedID: MPin.hashID(id))
        let token = try MPin.extractPIN(mpinID: id, pin0: secret("1234"), pin1: secret("second"),
                                        clientSecret: SecretBytes(copying: cs))
        let f0 = Fr(MPin.pinMultiplier(MPin.sdkPINValue(Array("1234".utf8))))
        let f1 = Fr(UInt256(bigEndian: f1(id, "second"))!)
        let a = MPin.identityPoint(mpinID: id)
        let rebuilt = try G1Point(bytes: token.withTemporaryArray { $0 }) + a.multiplied(by: (f0 + f1).value)
        XCTAssertEqual(try rebuilt.encoded(), cs)
    }

    /// A whole two-pass run: only the right pin0 with the right pin1 passes.
    func testOnlyBothFactorsAuthenticate() throws {
        let id = mpinID("erin@example.org")
        let hashedID = MPin.hashID(id)
        let date: Int32 = 20_000
        let ms = try MPin.randomMasterSecret()
        let ss = try MPin.serverSecret(masterSecret: ms)
        let cs = try MPin.clientSecret(masterSecret: ms, hashedID: hashedID)
        let permit = try MPin.timePermit(date: date, masterSecret: ms, hashedID: hashedID)
        let token = try MPin.extractPIN(mpinID: id, pin0: secret("1234"), pin1: secret("hardware-key-7"),
                                        clientSecret: SecretBytes(copying: cs))
        func run(_ pin0: String, _ pin1: String) throws -> MPin.ServerResult {
            let x = try MPin.secretScalar()
            let p1 = try MPin.client1(date: date, mpinID: id, x: x, pin0: secret(pin0), pin1: secret(pin1), token: token,
                                      timePermit: permit)
            let y = try SystemRandom.scalar()
            let v = try MPin.client2(x: x, y: y, sec: p1.sec)
            let server = try MPin.server1(date: date, mpinID: id)
            return MPin.server2(date: date, hid: server.hid, htid: server.htid, y: y, serverSecret: ss, u: p1.u, ut: p1.ut, v: v)
        }
        XCTAssertEqual(try run("1234", "hardware-key-7"), .ok)
        XCTAssertEqual(try run("1234", "hardware-key-8"), .badPIN, "right pin0, wrong pin1")
        XCTAssertEqual(try run("1234", ""), .badPIN, "right pin0, no pin1")
        XCTAssertEqual(try run("1235", "hardware-key-7"), .badPIN, "wrong pin0, right pin1")
    }
}
