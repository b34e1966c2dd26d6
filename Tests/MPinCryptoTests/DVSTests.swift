import MPinCrypto
import MPinVectorCheck
import XCTest

/// Designated verifier signatures end to end on random identities, keys, PINs and messages:
/// honest signatures verify; a changed message, time value, public key, identity or PIN fails.
final class DVSTests: XCTestCase {
    /// One user registered for DVS: master secret, key pair, the issued secrets and the token.
    struct Signer {
        let mpinID: [UInt8]
        let z: [UInt8]
        let publicKey: DVSPublicKey
        let identity: [UInt8]
        let masterSecret: Fr
        let serverSecret: [UInt8]
        let preparedServerSecret: PreparedG2
        let clientSecret: [UInt8]
        let keyedClientSecret: [UInt8]
        let pin: Int32
        let token: [UInt8]
    }

    private func makeSigner(pin fixedPIN: Int32? = nil) throws -> Signer {
        let mpinID = Array("{\"userID\": \"signer-\(hexString(try randomBytes(6)))@example.com\"}".utf8)
        let (z, publicKey) = try DVS.generateKeyPair()
        let identity = DVS.signingIdentity(mpinID: mpinID, publicKey: publicKey)
        let ms1 = try MPin.randomMasterSecret(), ms2 = try MPin.randomMasterSecret()
        let hashed = MPin.hashID(identity)
        let ss = try MPin.recombineG2(try MPin.serverSecret(masterSecret: ms1), try MPin.serverSecret(masterSecret: ms2))
        let cs = try MPin.recombineG1(try MPin.clientSecret(masterSecret: ms1, hashedID: hashed),
                                      try MPin.clientSecret(masterSecret: ms2, hashedID: hashed))
        let keyed = try DVS.keyedClientSecret(clientSecret: cs, secretKey: z)
        let pin = try fixedPIN ?? Int32(randomInt(below: 10_000))
        let token = try DVS.extractToken(signingIdentity: identity, pin: pin, keyedClientSecret: keyed)
        return Signer(mpinID: mpinID, z: z, publicKey: publicKey, identity: identity,
                      masterSecret: Fr(UInt256(bigEndian: ms1)!) + Fr(UInt256(bigEndian: ms2)!),
                      serverSecret: ss, preparedServerSecret: PreparedG2(try G2Point(bytes: ss)),
                      clientSecret: cs, keyedClientSecret: keyed, pin: pin, token: token)
    }

    private func verify(_ s: Signer, _ signature: DVSSignature, message: [UInt8], publicKey: DVSPublicKey? = nil,
                        mpinID: [UInt8]? = nil) -> Bool {
        DVS.verify(signature, message: message, mpinID: mpinID ?? s.mpinID, publicKey: publicKey ?? s.publicKey,
                   serverSecret: s.preparedServerSecret)
    }

    /// The octet-level verifier (Milagro's MPIN_SERVER with Pa) on the same signature.
    private func verifyOctets(_ s: Signer, _ signature: DVSSignature, message: [UInt8],
                              publicKey: [UInt8]? = nil) -> MPin.ServerResult {
        DVS.verify(signingIdentity: s.identity, publicKey: publicKey ?? s.publicKey.bytes, serverSecret: s.serverSecret,
                   u: signature.u, v: signature.v, message: message, timeValue: signature.timeValue)
    }

    // MARK: Key material

    func testPublicKeyIsInverseTimesGenerator() throws {
        for _ in 0..<3 {
            let (z, pa) = try DVS.generateKeyPair()
            let zv = UInt256(bigEndian: z)!
            XCTAssertTrue(pa.point.multiplied(by: zv) == G2Point.generator, "z·Pa = Q")
            XCTAssertFalse(pa.point == G2Point.generator, "Pa is not Q itself")
            XCTAssertEqual(try DVS.publicKey(secretKey: z), pa, "the key pair's Pa is Pa(z)")
            XCTAssertEqual(try DVSPublicKey(bytes: pa.bytes), pa, "Pa round-trips through its encoding")
            XCTAssertEqual(pa.bytes.count, 128)
        }
        // z = 1 gives Q; z = r − 1 gives −Q.
        let one = UInt256(1).bigEndianBytes
        XCTAssertEqual(try DVS.publicKey(secretKey: one).bytes, try G2Point.generator.encoded())
        let rMinus1 = groupOrder.subtractingWithBorrow(UInt256(1)).0.bigEndianBytes
        XCTAssertEqual(try DVS.publicKey(secretKey: rMinus1).bytes, try (-G2Point.generator).encoded())
    }

    func testIdentityAndKeyedSecret() throws {
        let s = try makeSigner()
        XCTAssertEqual(s.identity, s.mpinID + s.publicKey.bytes, "ID ‖ Pa, no separator")
        let split = try DVS.splitSigningIdentity(s.identity)
        XCTAssertEqual(split.mpinID, s.mpinID)
        XCTAssertEqual(split.publicKey, s.publicKey)
        // z·s·A for A = map(SHA-256(ID ‖ Pa)); the token adds back PIN·A (not z·PIN·A).
        let a = MPin.identityPoint(mpinID: s.identity)
        let zs = Fr(UInt256(bigEndian: s.z)!) * s.masterSecret
        XCTAssertEqual(s.keyedClientSecret, try a.multiplied(by: zs.value).encoded(), "keyed secret = z·s·A")
        XCTAssertEqual(try MPin.restorePIN(mpinID: s.identity, pin: s.pin, token: s.token), s.keyedClientSecret,
                       "token + PIN·A = z·s·A")
    }

    // MARK: Signatures

    func testSignaturesVerifyWithAndWithoutTime() throws {
        let s = try makeSigner()
        for timeValue: Int32 in [0, 1, 1_700_000_000, Int32.max] {
            for messageLength in [0, 32, 100] {
                let message = try randomBytes(messageLength)
                let sig = try DVS.sign(signingIdentity: s.identity, pin: s.pin, token: s.token, message: message,
                                       timeValue: timeValue)
                XCTAssertEqual(sig.timeValue, timeValue)
                XCTAssertTrue(verify(s, sig, message: message), "T = \(timeValue), \(messageLength)-byte message")
                XCTAssertEqual(verifyOctets(s, sig, message: message), .ok, "octets, T = \(timeValue)")
            }
        }
    }

    /// T = 0 leaves the time bytes out of the challenge, T > 0 puts be32(T) first.
    func testChallengeTimePrefix() throws {
        let s = try makeSigner()
        let message = try randomBytes(32)
        let x = try SystemRandom.scalar()
        let sig0 = try DVS.sign(signingIdentity: s.identity, x: x, pin: s.pin, token: s.token, message: message, timeValue: 0)
        let sigT = try DVS.sign(signingIdentity: s.identity, x: x, pin: s.pin, token: s.token, message: message,
                                timeValue: 0x0102_0304)
        XCTAssertEqual(sig0.u, sigT.u, "U = x·A does not depend on T")
        XCTAssertNotEqual(sig0.v, sigT.v, "V depends on T through y")
        let y0 = DVS.challenge(u: sig0.u, message: message, timeValue: 0)
        let yT = DVS.challenge(u: sig0.u, message: message, timeValue: 0x0102_0304)
        XCTAssertEqual(y0, Fr(UInt256(bigEndian: MPin.hashID(sig0.u + message))!).bytes, "y = SHA-256(U ‖ M) mod r")
        XCTAssertEqual(yT, Fr(UInt256(bigEndian: MPin.hashID([1, 2, 3, 4] + sig0.u + message))!).bytes,
                       "y = SHA-256(be32(T) ‖ U ‖ M) mod r")
        // V = −(x + y)·SEC with SEC = TOKEN + PIN·A.
        let pass1 = try MPin.client1(date: 0, mpinID: s.identity, x: x, pin: s.pin, token: s.token, timePermit: nil)
        XCTAssertEqual(sig0.v, try MPin.client2(x: x, y: y0, sec: pass1.sec))
        XCTAssertEqual(sigT.v, try MPin.client2(x: x, y: yT, sec: pass1.sec))
        // A signature made with one T does not verify with another.
        let moved = try DVSSignature(u: sigT.u, v: sigT.v, timeValue: 0x0102_0305)
        XCTAssertFalse(verify(s, moved, message: message), "changed time value")
        let dropped = try DVSSignature(u: sigT.u, v: sigT.v, timeValue: 0)
        XCTAssertFalse(verify(s, dropped, message: message), "time value dropped")
        XCTAssertTrue(verify(s, sig0, message: message) && verify(s, sigT, message: message))
    }

    func testChangedMessageFails() throws {
        let s = try makeSigner()
        for timeValue: Int32 in [0, 1_700_000_000] {
            let message = Array(MPin.hashID(Array("document \(timeValue)".utf8)))
            let sig = try DVS.sign(signingIdentity: s.identity, pin: s.pin, token: s.token, message: message,
                                   timeValue: timeValue)
            XCTAssertTrue(verify(s, sig, message: message))
            var flipped = message
            flipped[try randomInt(below: flipped.count)] ^= 0x01
            XCTAssertFalse(verify(s, sig, message: flipped), "one bit of the message changed, T = \(timeValue)")
            XCTAssertEqual(verifyOctets(s, sig, message: flipped), .badPIN, "octets: changed message is MPIN_BAD_PIN")
            XCTAssertFalse(verify(s, sig, message: message + [0]), "message extended")
            XCTAssertFalse(verify(s, sig, message: []), "empty message")
        }
    }

    func testWrongPINFails() throws {
        let s = try makeSigner(pin: 4321)
        let message = try randomBytes(32)
        for wrong: Int32 in [4320, 4322, 1234, 0, 14320] {
            let sig = try DVS.sign(signingIdentity: s.identity, pin: wrong, token: s.token, message: message,
                                   timeValue: 1_700_000_000)
            XCTAssertFalse(verify(s, sig, message: message), "PIN \(wrong)")
            XCTAssertEqual(verifyOctets(s, sig, message: message), .badPIN, "octets, PIN \(wrong)")
        }
        // 14321 % 10000 = 4321: Milagro's PIN reduction makes it the same PIN.
        let same = try DVS.sign(signingIdentity: s.identity, pin: 14321, token: s.token, message: message, timeValue: 5)
        XCTAssertTrue(verify(s, same, message: message))
    }

    func testChangedPublicKeyFails() throws {
        let s = try makeSigner()
        let message = try randomBytes(32)
        let sig = try DVS.sign(signingIdentity: s.identity, pin: s.pin, token: s.token, message: message,
                               timeValue: 1_700_000_000)
        XCTAssertTrue(verify(s, sig, message: message))
        let (_, other) = try DVS.generateKeyPair()
        XCTAssertFalse(verify(s, sig, message: message, publicKey: other), "another user's key (identity ID ‖ Pa')")
        XCTAssertEqual(verifyOctets(s, sig, message: message, publicKey: other.bytes), .badPIN,
                       "octets: identity ID ‖ Pa, key Pa'")
        XCTAssertEqual(verifyOctets(s, sig, message: message, publicKey: try G2Point.generator.encoded()), .badPIN,
                       "Q instead of Pa (the plain M-Pin check)")
        XCTAssertFalse(verify(s, sig, message: message, mpinID: s.mpinID + [0x20]), "changed identity")
        // A token for the identity with the plain M-Pin secret (no z folded in) does not sign.
        let unkeyedToken = try MPin.extractPIN(mpinID: s.identity, pin: s.pin, clientSecret: s.clientSecret)
        let unkeyed = try DVS.sign(signingIdentity: s.identity, pin: s.pin, token: unkeyedToken, message: message,
                                   timeValue: 7)
        XCTAssertFalse(verify(s, unkeyed, message: message), "client secret without z")
    }

    func testDeterministicSigning() throws {
        let s = try makeSigner()
        let x = try SystemRandom.scalar(), message = try randomBytes(32)
        let a = try DVS.sign(signingIdentity: s.identity, x: x, pin: s.pin, token: s.token, message: message, timeValue: 9)
        let b = try DVS.sign(signingIdentity: s.identity, x: x, pin: s.pin, token: s.token, message: message, timeValue: 9)
        XCTAssertEqual(a, b, "same x, same signature")
        XCTAssertEqual(a.u, try MPin.identityPoint(mpinID: s.identity).multiplied(by: UInt256(bigEndian: x)!).encoded(),
                       "U = x·A")
    }
}
