import MPinCrypto
import MPinVectorCheck
import XCTest

/// The optimal ate pairing: the published value of e(G2gen, G1gen) and its algebraic
/// properties on random scalars.
final class PairingTests: XCTestCase {
    /// e(G2 generator, G1 generator) as a GT octet, copied from docs/CRYPTO.md §1.
    static let generatorPairingHex = [
        "1b774b5de25480c511d4cfb5f02b0278caef6966bdb0a0374388c14c6fd74b00", "18a6813f33347dbf4a3a34b8a30e00380dea2f7ed076e33b5b502abc46a7c09d",
        "16a906d4b562005671f38f9950b731e7a749f6eb0b283ef90331fd2c93dfa82e", "0457210a64b2b5509760dd0f76ab20ebba907b8fbb8baa0f4c9450904a49071c",
        "02d673f38f4e4bed6dcc6841fbd0485ac07e55d11a0cbbe1ef022b523288ef3f", "19991c7db17c71b4f6d48b3216bfc6e2521a86e6569c7ac35b477c6d95243ca1",
        "0479ee2f619e987311a5e5f818c594d9a3c9f7c461e1a89be809484515e95f7d", "042aa02cbbfd71021d47ed2e9808ec6d4836c630c0e7dba52a093f7b30d54626",
        "11bd1e2779bfe60ef52d9ccab151c86ef2e2d53a7819a1b2bc24fccc12d91b68", "0e7f3ec4398ca3a5758dcca8f6c7c049b1be2894fda724219a3d42c45ad853d2",
        "1aef37661f78cc8ad36ef5641d8ed8aa20dcdeebd34199f571acf7eedf3b0f78", "1365362603f081bd78b47cf6b7a9d389083278e3040f3aa2903deed3f73c725b",
    ].joined()

    static let p = G1Point.generator
    static let q = G2Point.generator
    static let base = Pairing.pairing(q, p)

    func testGeneratorsMatchSpec() {
        guard let (x1, y1) = G1Point.generator.affine else { return XCTFail("G1 generator is infinity") }
        XCTAssertEqual(hexString(x1.bytes), "2400000008702a0db0bddf647a6366d3243fd6ee18093ee1be6623ef5c1b55b2")
        XCTAssertEqual(y1, .one)
        XCTAssertTrue(G1Point.generator.isOnCurve)
        do throws(MPinCryptoError) {
            let enc = try G2Point.generator.encoded()
            XCTAssertEqual(hexString(enc), [
                "19682d2c7053b256358b2500f5c34bbb907c85bfa03e2726c0851ceee4d2ec74",
                "1466b9ec3e19f64aa011c937a8e99743f81b97b0c209c30f47a58e8b2e29cfe1",
                "0a79edd972332b8dd81e22157daee2096361b33d847ec1b30cfbfcebcf0be09f",
                "06160c39ecc4c09035c6e4512d8d3461c2864ea569d2edebed904b228898ee9d",
            ].joined())
        } catch {
            XCTFail("\(error)")
        }
        XCTAssertTrue(G2Point.generator.isOnCurve)
        XCTAssertTrue(G2Point.generator.isInPrimeOrderSubgroup)
        XCTAssertEqual(BN254FieldModulus.modulus, fieldPrime)
        XCTAssertEqual(BN254ScalarModulus.modulus, groupOrder)
    }

    func testGeneratorPairingMatchesSpec() throws {
        XCTAssertEqual(Self.generatorPairingHex.count, 768)
        XCTAssertEqual(hexString(Self.base.bytes), Self.generatorPairingHex)
        do throws(MPinCryptoError) {
            let decoded = try Fp12(bytes: hexBytes(Self.generatorPairingHex) ?? [])
            XCTAssertEqual(decoded, Self.base)
        } catch {
            XCTFail("\(error)")
        }
    }

    func testNonDegenerateAndOrderR() {
        XCTAssertFalse(Self.base.isOne, "e(G2gen, G1gen) ≠ 1")
        XCTAssertTrue(Self.base.power(publicExponent: groupOrder).isOne, "e(Q, P)^r = 1")
        XCTAssertTrue(Self.p.multiplied(by: groupOrder).isInfinity, "r·G1gen = O")
        XCTAssertTrue(Self.q.multiplied(by: groupOrder).isInfinity, "r·G2gen = O")
        XCTAssertFalse(Self.p.multiplied(by: UInt256(12345)).isInfinity)
        // (r − 1)·P = −P and (r + 1)·P = P.
        let (rMinus1, _) = groupOrder.subtractingWithBorrow(UInt256(1))
        assertSamePoint(Self.p.multiplied(by: rMinus1), -Self.p, "(r−1)·G1gen")
        assertSamePoint(Self.q.multiplied(by: rMinus1), -Self.q, "(r−1)·G2gen")
        // Pairings with the point at infinity are 1.
        XCTAssertTrue(Pairing.pairing(.infinity, Self.p).isOne)
        XCTAssertTrue(Pairing.pairing(Self.q, .infinity).isOne)
    }

    /// The final exponentiation on arbitrary elements of Fp12 (not Miller-loop values): its
    /// powers by u square compressed and decompress with one shared inversion, which must give
    /// a homomorphism onto the order-r subgroup, and 1 for 1 (whose compressed coordinates are
    /// all zero, so every denominator is 0).
    func testFinalExponentiationIsAHomomorphismIntoGT() {
        func randomFp12() -> Fp12 {
            Fp12(coefficients: (0..<12).map { _ in
                Fp(UInt256(.random(in: 0 ... .max), .random(in: 0 ... .max), .random(in: 0 ... .max), .random(in: 0 ... 1 << 60)))
            })
        }
        XCTAssertTrue(Pairing.finalExponentiation(.one).isOne)
        for _ in 0..<4 {
            let f = randomFp12(), g = randomFp12()
            let ef = Pairing.finalExponentiation(f), eg = Pairing.finalExponentiation(g)
            XCTAssertFalse(ef.isOne)
            XCTAssertTrue(ef.power(publicExponent: groupOrder).isOne, "f^((p¹²−1)/r) has order r")
            XCTAssertEqual(Pairing.finalExponentiation(f * g), ef * eg)
        }
    }

    func testBilinearity() throws {
        for _ in 0..<3 {
            let a = try randomNonZeroFr(), b = try randomNonZeroFr()
            let aP = Self.p.multiplied(by: a.value)
            let bQ = Self.q.multiplied(by: b.value)
            let lhs = Pairing.pairing(bQ, aP)
            let rhs = Self.base.power(publicExponent: (a * b).value)
            XCTAssertEqual(lhs, rhs, "e(bQ, aP) = e(Q, P)^(ab) for a = \(hexString(a.bytes)), b = \(hexString(b.bytes))")
            XCTAssertEqual(Pairing.pairing(Self.q, aP), Self.base.power(publicExponent: a.value), "linear in P")
            XCTAssertEqual(Pairing.pairing(bQ, Self.p), Self.base.power(secretExponent: b.value), "linear in Q")
            XCTAssertTrue(lhs.power(publicExponent: groupOrder).isOne, "e(bQ, aP)^r = 1")
        }
    }

    func testAdditivityInEachArgument() throws {
        let p1 = Self.p.multiplied(by: try randomFr().value), p2 = Self.p.multiplied(by: try randomFr().value)
        let q1 = Self.q.multiplied(by: try randomFr().value)
        XCTAssertEqual(Pairing.pairing(q1, p1 + p2), Pairing.pairing(q1, p1) * Pairing.pairing(q1, p2))
    }

    func testDoublePairingIsProduct() throws {
        for _ in 0..<2 {
            let p1 = Self.p.multiplied(by: try randomFr().value), p2 = Self.p.multiplied(by: try randomFr().value)
            let q1 = Self.q.multiplied(by: try randomFr().value), q2 = Self.q.multiplied(by: try randomFr().value)
            XCTAssertEqual(Pairing.doublePairing(q1, p1, q2, p2), Pairing.pairing(q1, p1) * Pairing.pairing(q2, p2))
        }
        // With a point at infinity in one pair, the other pair alone remains.
        XCTAssertEqual(Pairing.doublePairing(Self.q, Self.p, Self.q, .infinity), Self.base)
    }

    func testPreparedPairingsEqualThePairings() throws {
        XCTAssertEqual(Pairing.pairing(prepared: .generator, Self.p), Self.base)
        for _ in 0..<2 {
            let p1 = Self.p.multiplied(by: try randomFr().value), p2 = Self.p.multiplied(by: try randomFr().value)
            let q1 = Self.q.multiplied(by: try randomFr().value), q2 = Self.q.multiplied(by: try randomFr().value)
            let (r1, r2) = (PreparedG2(q1), PreparedG2(q2))
            XCTAssertEqual(Pairing.pairing(prepared: r1, p1), Pairing.pairing(q1, p1))
            XCTAssertEqual(Pairing.doublePairing(prepared: r1, p1, prepared: r2, p2), Pairing.doublePairing(q1, p1, q2, p2))
            // A prepared point serves any number of pairings.
            XCTAssertEqual(Pairing.pairing(prepared: r1, p2), Pairing.pairing(q1, p2))
        }
        // Infinity on either side contributes 1, as in the unprepared loop.
        XCTAssertEqual(Pairing.doublePairing(prepared: PreparedG2(.infinity), Self.p, prepared: .generator, Self.p), Self.base)
        XCTAssertEqual(Pairing.doublePairing(prepared: .generator, .infinity, prepared: .generator, Self.p), Self.base)
    }

    func testInverseCancels() throws {
        let k = try randomNonZeroFr()
        let p = Self.p.multiplied(by: k.value)
        let q = Self.q.multiplied(by: try randomNonZeroFr().value)
        let e1 = Pairing.pairing(q, -p), e2 = Pairing.pairing(q, p)
        XCTAssertTrue((e1 * e2).isOne, "e(Q, −P)·e(Q, P) = 1")
        XCTAssertTrue(Pairing.doublePairing(q, -p, q, p).isOne, "double pairing of e(Q, −P)·e(Q, P)")
        XCTAssertEqual(e1, e2.conjugate, "GT inverse is the conjugate")
        XCTAssertEqual(Pairing.pairing(-q, p), e1, "e(−Q, P) = e(Q, −P)")
    }

    func testRandomMultipleRoundTrips() throws {
        for i in 0..<8 {
            let k = try randomNonZeroFr()
            let p = Self.p.multiplied(by: k.value)
            do throws(MPinCryptoError) {
                let enc = try p.encoded()
                XCTAssertEqual(enc.count, 65)
                XCTAssertEqual(enc[0], 0x04)
                assertSamePoint(try G1Point(bytes: enc), p, "G1 round trip \(i)")
                guard let (x, y) = p.affine else { XCTFail("k·P is not at infinity for k in [1, r)"); continue }
                assertSamePoint(try G1Point(compressedBytes: [0x02 | UInt8(y.parity)] + x.bytes), p,
                                "G1 compressed round trip \(i)")
                if i < 3 {
                    let q = Self.q.multiplied(by: k.value)
                    let enc2 = try q.encoded()
                    XCTAssertEqual(enc2.count, 128)
                    assertSamePoint(try G2Point(bytes: enc2), q, "G2 round trip \(i)")
                }
            } catch {
                XCTFail("round trip \(i): \(error)")
            }
        }
    }

    /// Scalar multiplication agrees with repeated addition and with distributivity.
    func testScalarMultiplicationConsistency() throws {
        var acc1 = G1Point.infinity, acc2 = G2Point.infinity
        for k in 0..<20 {
            assertSamePoint(Self.p.multiplied(by: UInt256(UInt64(k))), acc1, "\(k)·G1gen")
            assertSamePoint(Self.p.multiplied(bySmall: UInt64(k), bits: 14), acc1, "\(k)·G1gen by the ladder")
            assertSamePoint(Self.q.multiplied(by: UInt256(UInt64(k))), acc2, "\(k)·G2gen")
            acc1 = acc1 + Self.p
            acc2 = acc2 + Self.q
        }
        let a = try randomFr(), b = try randomFr()
        assertSamePoint(Self.p.multiplied(by: a.value) + Self.p.multiplied(by: b.value),
                        Self.p.multiplied(by: (a + b).value), "aP + bP = (a+b)P")
        assertSamePoint(Self.p.multiplied(by: a.value).multiplied(by: b.value),
                        Self.p.multiplied(by: (a * b).value), "b(aP) = (ab)P")
        assertSamePoint(Self.q.multiplied(by: a.value) + Self.q.multiplied(by: b.value),
                        Self.q.multiplied(by: (a + b).value), "aQ + bQ = (a+b)Q")
    }
}
