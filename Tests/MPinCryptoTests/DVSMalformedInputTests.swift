import MPinCrypto
import MPinVectorCheck
import XCTest

/// Every DVS decoder and entry point fed malformed input throws a typed MPinCryptoError (or the
/// octet-level verifier returns .invalidPoint); none traps.
final class DVSMalformedInputTests: XCTestCase {
    static let pBytes = fieldPrime.bigEndianBytes
    static let g1Valid: [UInt8] = try! G1Point.generator.multiplied(by: UInt256(987_654_321)).encoded()
    static let paValid: [UInt8] = try! G2Point.generator.multiplied(by: UInt256(123_456_789)).encoded()
    static let scalar = [UInt8](repeating: 0x11, count: 32)

    /// ECP21 of the first G2 vector: on the twist, outside G2.
    private func pointOutsideG2() throws -> [UInt8] {
        let blocks = parseVectorBlocks(try TestData.text("vectors/ecp2_test_vector_BN254CX.txt"))
        guard let first = blocks.first else { throw ParseError("no G2 vectors") }
        let (x, y) = try parseG2Coordinates(try first.field("ECP21"))
        return rawG2Encoding(x, y)
    }

    // MARK: Public key Pa

    func testPublicKeyDecoder() throws {
        XCTAssertEqual(try DVSPublicKey(bytes: Self.paValid).bytes, Self.paValid, "a valid key decodes")
        for n in [0, 1, 64, 127, 129, 256] {
            let bytes = [UInt8](repeating: 0x01, count: n)
            assertThrows(.invalidLength(expected: 128, got: n), "Pa of \(n) bytes") { () throws(MPinCryptoError) in
                try DVSPublicKey(bytes: bytes)
            }
        }
        assertThrows(.invalidLength(expected: 128, got: 127), "truncated Pa") { () throws(MPinCryptoError) in
            try DVSPublicKey(bytes: Self.paValid.dropLast())
        }
        assertThrows(.pointAtInfinity, "all-zero Pa (infinity)") { () throws(MPinCryptoError) in
            try DVSPublicKey(bytes: [UInt8](repeating: 0, count: 128))
        }
        for k in 0..<4 {
            var bytes = Self.paValid
            bytes.replaceSubrange((32 * k)..<(32 * k + 32), with: Self.pBytes)
            assertThrows(.nonCanonical, "Pa with coordinate \(k) = p") { () throws(MPinCryptoError) in
                try DVSPublicKey(bytes: bytes)
            }
        }
        assertThrows(.nonCanonical, "Pa of all 0xff") { () throws(MPinCryptoError) in
            try DVSPublicKey(bytes: [UInt8](repeating: 0xff, count: 128))
        }
        var offCurve = Self.paValid
        offCurve[127] ^= 1
        assertThrows(.notOnCurve, "Pa off the twist") { () throws(MPinCryptoError) in try DVSPublicKey(bytes: offCurve) }
        var smallX = [UInt8](repeating: 0, count: 128)
        smallX[31] = 1
        assertThrows(.notOnCurve, "Pa = (1, 0)") { () throws(MPinCryptoError) in try DVSPublicKey(bytes: smallX) }
        let outside = try pointOutsideG2()
        assertThrows(.notInSubgroup, "Pa on the twist outside G2") { () throws(MPinCryptoError) in
            try DVSPublicKey(bytes: outside)
        }
    }

    func testSecretKeyScalar() {
        for n in [0, 31, 33, 64] {
            let bad = [UInt8](repeating: 1, count: n)
            assertThrows(.invalidLength(expected: 32, got: n), "z of \(n) bytes") { () throws(MPinCryptoError) in
                try DVS.publicKey(secretKey: bad)
            }
            assertThrows(.invalidLength(expected: 32, got: n), "keyedClientSecret with a \(n)-byte z") {
                () throws(MPinCryptoError) in try DVS.keyedClientSecret(clientSecret: Self.g1Valid, secretKey: bad)
            }
        }
        let zero = [UInt8](repeating: 0, count: 32)
        assertThrows(.zeroScalar, "z = 0") { () throws(MPinCryptoError) in try DVS.publicKey(secretKey: zero) }
        assertThrows(.zeroScalar, "keyedClientSecret with z = 0") { () throws(MPinCryptoError) in
            try DVS.keyedClientSecret(clientSecret: Self.g1Valid, secretKey: zero)
        }
        let (rPlus1, _) = groupOrder.addingWithCarry(UInt256(1))
        for (what, z) in [("r", groupOrder.bigEndianBytes), ("r + 1", rPlus1.bigEndianBytes),
                          ("2^256 − 1", [UInt8](repeating: 0xff, count: 32))] {
            assertThrows(.nonCanonical, "z = \(what)") { () throws(MPinCryptoError) in try DVS.publicKey(secretKey: z) }
            assertThrows(.nonCanonical, "keyedClientSecret with z = \(what)") { () throws(MPinCryptoError) in
                try DVS.keyedClientSecret(clientSecret: Self.g1Valid, secretKey: z)
            }
        }
    }

    func testKeyedClientSecretAndTokenRejectBadPoints() {
        let id = Array("alice@example.com".utf8) + Self.paValid
        let garbage: [([UInt8], MPinCryptoError)] = [
            ([], .invalidLength(expected: 65, got: 0)),
            (Array(Self.g1Valid.dropLast()), .invalidLength(expected: 65, got: 64)),
            ([UInt8](repeating: 0, count: 65), .invalidPrefix),
            ([0x04] + Self.pBytes + Self.pBytes, .nonCanonical),
            ([0x04] + [UInt8](repeating: 0, count: 64), .notOnCurve),
        ]
        for (i, (g, error)) in garbage.enumerated() {
            assertThrows(error, "keyedClientSecret with garbage \(i)") { () throws(MPinCryptoError) in
                try DVS.keyedClientSecret(clientSecret: g, secretKey: Self.scalar)
            }
            assertThrows(error, "extractToken with garbage \(i)") { () throws(MPinCryptoError) in
                try DVS.extractToken(signingIdentity: id, pin: 1234, keyedClientSecret: g)
            }
            assertThrows(error, "sign with a garbage token \(i)") { () throws(MPinCryptoError) in
                try DVS.sign(signingIdentity: id, x: Self.scalar, pin: 1, token: g, message: [1, 2], timeValue: 3)
            }
        }
    }

    // MARK: Signing identity

    func testSplitSigningIdentity() throws {
        for n in [0, 1, 127, 128] {
            let bytes = [UInt8](Self.paValid.suffix(n))
            assertThrows(.invalidLength(expected: 129, got: n), "identity of \(n) bytes") { () throws(MPinCryptoError) in
                try DVS.splitSigningIdentity(bytes)
            }
        }
        let split = try DVS.splitSigningIdentity([0x61] + Self.paValid)
        XCTAssertEqual(split.mpinID, [0x61])
        XCTAssertEqual(split.publicKey.bytes, Self.paValid)
        let id = Array("bob".utf8)
        assertThrows(.pointAtInfinity, "identity ending in 128 zero bytes") { () throws(MPinCryptoError) in
            try DVS.splitSigningIdentity(id + [UInt8](repeating: 0, count: 128))
        }
        var offCurve = Self.paValid
        offCurve[100] ^= 0x10
        assertThrows(.notOnCurve, "identity with an off-curve key") { () throws(MPinCryptoError) in
            try DVS.splitSigningIdentity(id + offCurve)
        }
        let outside = try pointOutsideG2()
        assertThrows(.notInSubgroup, "identity with a key outside G2") { () throws(MPinCryptoError) in
            try DVS.splitSigningIdentity(id + outside)
        }
        assertThrows(.nonCanonical, "identity with a non-canonical key") { () throws(MPinCryptoError) in
            try DVS.splitSigningIdentity(id + Self.pBytes + Array(Self.paValid[32...]))
        }
    }

    // MARK: Signature

    func testSignatureDecoder() {
        let good = Self.g1Valid
        let cases: [([UInt8], MPinCryptoError)] = [
            ([], .invalidLength(expected: 65, got: 0)),
            (Array(good.dropLast()), .invalidLength(expected: 65, got: 64)),
            (good + [0], .invalidLength(expected: 65, got: 66)),
            ([0x03] + Array(good[1...]), .invalidPrefix),
            ([UInt8](repeating: 0, count: 65), .invalidPrefix),
            ([0x04] + Self.pBytes + Array(good[33...]), .nonCanonical),
            ([0x04] + Array(good[1..<33]) + [UInt8](repeating: 0xff, count: 32), .nonCanonical),
            ([0x04] + [UInt8](repeating: 0, count: 64), .notOnCurve),
            (Array(good.dropLast()) + [good[64] ^ 1], .notOnCurve),
        ]
        for (i, (bad, error)) in cases.enumerated() {
            assertThrows(error, "signature with a bad U (\(i))") { () throws(MPinCryptoError) in
                try DVSSignature(u: bad, v: good, timeValue: 1)
            }
            assertThrows(error, "signature with a bad V (\(i))") { () throws(MPinCryptoError) in
                try DVSSignature(u: good, v: bad, timeValue: 1)
            }
        }
        for t: Int32 in [-1, Int32.min] {
            assertThrows(.invalidDate, "signature with T = \(t)") { () throws(MPinCryptoError) in
                try DVSSignature(u: good, v: good, timeValue: t)
            }
        }
        XCTAssertEqual(try DVSSignature(u: good, v: good, timeValue: 0).u, good, "a well-formed signature decodes")
    }

    func testSignRejectsBadInput() {
        let id = Array("carol".utf8) + Self.paValid
        for n in [0, 31, 33] {
            let bad = [UInt8](repeating: 1, count: n)
            assertThrows(.invalidLength(expected: 32, got: n), "sign with a \(n)-byte x") { () throws(MPinCryptoError) in
                try DVS.sign(signingIdentity: id, x: bad, pin: 1, token: Self.g1Valid, message: [], timeValue: 0)
            }
        }
        assertThrows(.invalidDate, "sign with T < 0") { () throws(MPinCryptoError) in
            try DVS.sign(signingIdentity: id, x: Self.scalar, pin: 1, token: Self.g1Valid, message: [], timeValue: -5)
        }
    }

    // MARK: Octet-level verifier

    func testVerifierRejectsMalformedOctets() throws {
        let id = Array("dave".utf8) + Self.paValid
        let ss = try G2Point.generator.multiplied(by: UInt256(55)).encoded()
        let g = Self.g1Valid
        func run(pa: [UInt8] = Self.paValid, ss: [UInt8] = ss, u: [UInt8] = g, v: [UInt8] = g, t: Int32 = 1) -> MPin.ServerResult {
            DVS.verify(signingIdentity: id, publicKey: pa, serverSecret: ss, u: u, v: v, message: [1], timeValue: t)
        }
        XCTAssertEqual(run(), .badPIN, "well-formed but not a signature")
        let outside = try pointOutsideG2()
        var offCurve = Self.paValid
        offCurve[127] ^= 1
        let badKeys: [(String, [UInt8])] = [
            ("empty", []), ("127 bytes", Array(Self.paValid.dropLast())), ("all zero (infinity)", [UInt8](repeating: 0, count: 128)),
            ("off the twist", offCurve), ("outside G2", outside), ("non-canonical", Self.pBytes + Array(Self.paValid[32...])),
        ]
        for (what, bad) in badKeys {
            XCTAssertEqual(run(pa: bad), .invalidPoint, "Pa \(what)")
            XCTAssertEqual(run(ss: bad), .invalidPoint, "server secret \(what)")
        }
        for bad in [[], [UInt8](repeating: 0, count: 65), [0x04] + [UInt8](repeating: 0, count: 64), Array(g.dropLast())] {
            XCTAssertEqual(run(u: bad), .invalidPoint, "bad U")
            XCTAssertEqual(run(v: bad), .invalidPoint, "bad V")
        }
        XCTAssertEqual(run(t: -1), .invalidPoint, "negative time value")
    }

    /// Random bytes into every DVS decoder: only typed refusals, and random strings are never keys.
    func testRandomBytesIntoDecoders() throws {
        let interesting = [0, 1, 32, 64, 65, 127, 128, 129, 200]
        for i in 0..<200 {
            let length = i % 2 == 0 ? interesting[try randomInt(below: interesting.count)] : try randomInt(below: 300)
            var bytes = try randomBytes(length)
            if !bytes.isEmpty, i % 3 == 0 { bytes[0] = 0x04 }
            do throws(MPinCryptoError) {
                _ = try DVSPublicKey(bytes: bytes)
                XCTFail("random \(length) bytes accepted as a public key")
            } catch {
                assertDecodeError(error, input: bytes, allowed: [.nonCanonical, .notOnCurve, .notInSubgroup, .pointAtInfinity])
            }
            do throws(MPinCryptoError) {
                _ = try DVSSignature(u: bytes, v: Self.g1Valid, timeValue: 0)
                XCTFail("random \(length) bytes accepted as U")
            } catch {
                assertDecodeError(error, input: bytes, allowed: [.invalidPrefix, .nonCanonical, .notOnCurve])
            }
            if length > 128 {
                do throws(MPinCryptoError) {
                    _ = try DVS.splitSigningIdentity(bytes)
                    XCTFail("random \(length) bytes accepted as a signing identity")
                } catch {
                    XCTAssertTrue([.nonCanonical, .notOnCurve, .notInSubgroup, .pointAtInfinity].contains(error), "\(error)")
                }
            }
        }
    }
}
