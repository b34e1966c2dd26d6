import MPinCrypto
import MPinVectorCheck
import XCTest

/// The DVS client steps over `SecretBytes` with the optional second factor (DVS+SecretBytes.swift):
/// with an empty pin1 they are Milagro's steps bit for bit; with one, both factors are needed.
final class DVSSecretBytesTests: XCTestCase {
    /// A signing identity with its server secret, the client secret the D-TAs would issue for
    /// it, and the key pair.
    private struct Enrolment {
        let mpinID: [UInt8]
        let z: [UInt8]
        let publicKey: DVSPublicKey
        let identity: [UInt8]
        let clientSecret: [UInt8]
        let serverSecret: PreparedG2
    }

    private func enrol() throws -> Enrolment {
        let mpinID = Array("{\"userID\": \"sb-\(hexString(try randomBytes(6)))@example.com\"}".utf8)
        let (z, publicKey) = try DVS.generateKeyPair()
        let identity = DVS.signingIdentity(mpinID: mpinID, publicKey: publicKey)
        let ms = try MPin.randomMasterSecret()
        let cs = try MPin.clientSecret(masterSecret: ms, hashedID: MPin.hashID(identity))
        let ss = PreparedG2(try G2Point(bytes: try MPin.serverSecret(masterSecret: ms)))
        return Enrolment(mpinID: mpinID, z: z, publicKey: publicKey, identity: identity, clientSecret: cs, serverSecret: ss)
    }

    private func token(_ e: Enrolment, pin0: String, pin1: String) throws -> SecretBytes {
        try DVS.extractToken(signingIdentity: e.identity, pin0: SecretBytes(copying: pin0.utf8),
                             pin1: SecretBytes(copying: pin1.utf8), clientSecret: SecretBytes(copying: e.clientSecret),
                             secretKey: SecretBytes(copying: e.z))
    }

    private func signs(_ e: Enrolment, token: borrowing SecretBytes, pin0: String, pin1: String, message: [UInt8]) throws -> Bool {
        let signature = try DVS.sign(signingIdentity: e.identity, pin0: SecretBytes(copying: pin0.utf8),
                                     pin1: SecretBytes(copying: pin1.utf8), token: token, message: message, timeValue: 1_700_000_000)
        return DVS.verify(signature, message: message, mpinID: e.mpinID, publicKey: e.publicKey, serverSecret: e.serverSecret)
    }

    func testOneFactorTokenIsMilagros() throws {
        let e = try enrol()
        let keyed = try DVS.keyedClientSecret(clientSecret: e.clientSecret, secretKey: e.z)
        let milagro = try DVS.extractToken(signingIdentity: e.identity, pin: MPin.sdkPINValue(Array("4321".utf8)), keyedClientSecret: keyed)
        let ours = try token(e, pin0: "4321", pin1: "")
        XCTAssertEqual(ours.withUnsafeBytes { Array($0) }, milagro)
        XCTAssertTrue(try signs(e, token: ours, pin0: "4321", pin1: "", message: Array("doc".utf8)))
        XCTAssertFalse(try signs(e, token: ours, pin0: "4322", pin1: "", message: Array("doc".utf8)))
    }

    func testTwoFactorsAreBothNeeded() throws {
        let e = try enrol()
        let t = try token(e, pin0: "1111", pin1: "nfc-tag-7")
        let hash = MPinCrypto.SHA256.hash(Array("release-1.0.tar.gz".utf8))
        XCTAssertTrue(try signs(e, token: t, pin0: "1111", pin1: "nfc-tag-7", message: hash))
        XCTAssertFalse(try signs(e, token: t, pin0: "1111", pin1: "", message: hash), "pin0 alone")
        XCTAssertFalse(try signs(e, token: t, pin0: "1111", pin1: "nfc-tag-8", message: hash), "wrong second factor")
        XCTAssertFalse(try signs(e, token: t, pin0: "1112", pin1: "nfc-tag-7", message: hash), "wrong PIN")
    }

    func testBadInputThrows() throws {
        let e = try enrol()
        let t = try token(e, pin0: "1111", pin1: "")
        XCTAssertThrowsError(try DVS.sign(signingIdentity: e.identity, pin0: SecretBytes(copying: "1111".utf8), pin1: SecretBytes(),
                                          token: t, message: [1], timeValue: -1))
        XCTAssertThrowsError(try DVS.sign(signingIdentity: e.identity, pin0: SecretBytes(copying: "1111".utf8), pin1: SecretBytes(),
                                          token: SecretBytes(copying: [UInt8](repeating: 7, count: 65)), message: [1], timeValue: 1))
        XCTAssertThrowsError(try DVS.extractToken(signingIdentity: e.identity, pin0: SecretBytes(copying: "1".utf8), pin1: SecretBytes(),
                                                  clientSecret: SecretBytes(copying: e.clientSecret),
                                                  secretKey: SecretBytes(copying: [UInt8](repeating: 0, count: 32))).count,
                             "a zero secret key")
    }
}
