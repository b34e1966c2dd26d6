import MPinCrypto
import XCTest

/// `==` and `equalMask` of the integer, field and group types, which are written by hand (all
/// limbs and coefficients compared, constant-time) instead of synthesized: each must see a
/// difference in every limb and coefficient position, not only the first.
final class EqualityTests: XCTestCase {
    /// A random 256-bit value below 2^253, so that it and its one-bit variants below are
    /// canonical field elements (both moduli are above 2^253).
    private func randomBelow253() throws -> UInt256 {
        var v = UInt256(bigEndian: try randomBytes(32))!
        v.w3 &= (1 << 61) - 1
        return v
    }

    /// `v` with one bit flipped in limb `limb` (0 = least significant).
    private func flipping(_ v: UInt256, limb: Int, bit: UInt64) -> UInt256 {
        var w = v
        switch limb {
        case 0: w.w0 ^= 1 << bit
        case 1: w.w1 ^= 1 << bit
        case 2: w.w2 ^= 1 << bit
        default: w.w3 ^= 1 << bit
        }
        return w
    }

    func testUInt256DiffersInEachLimb() throws {
        for _ in 0..<20 {
            let v = try randomBelow253()
            let copy = UInt256(v.w0, v.w1, v.w2, v.w3)
            XCTAssertTrue(v == copy)
            XCTAssertEqual(v.equalMask(copy), ~0)
            for limb in 0..<4 {
                for bit: UInt64 in [0, 31, 60] {
                    let w = flipping(v, limb: limb, bit: bit)
                    XCTAssertFalse(v == w, "limb \(limb) bit \(bit)")
                    XCTAssertTrue(v != w, "limb \(limb) bit \(bit)")
                    XCTAssertEqual(v.equalMask(w), 0, "limb \(limb) bit \(bit)")
                }
            }
        }
        XCTAssertTrue(UInt256.zero == UInt256(0))
        XCTAssertFalse(UInt256.zero == UInt256(0, 0, 0, 1 << 63))
    }

    /// The element whose Montgomery limbs are exactly `limbs` (`Fp(t)` stores t·R, so t·R⁻¹
    /// stores t): a difference in one limb of `limbs` is a difference in that stored limb.
    private func withStoredLimbs<M: MontgomeryModulus>(_ limbs: UInt256, _: M.Type) -> PrimeFieldElement<M> {
        PrimeFieldElement<M>(limbs) * PrimeFieldElement<M>(M.rModM).inverse
    }

    private func checkPrimeField<M: MontgomeryModulus>(_ modulus: M.Type) throws {
        for _ in 0..<10 {
            let t = try randomBelow253()
            let x = withStoredLimbs(t, M.self)
            XCTAssertTrue(x == withStoredLimbs(t, M.self))
            XCTAssertTrue(x == PrimeFieldElement<M>(x.value), "the same value built another way")
            XCTAssertEqual(x.equalMask(x), ~0)
            for limb in 0..<4 {
                let y = withStoredLimbs(flipping(t, limb: limb, bit: 7), M.self)
                XCTAssertFalse(x == y, "stored limb \(limb)")
                XCTAssertEqual(x.equalMask(y), 0, "stored limb \(limb)")
                // And by value: the canonical integer differs in that limb.
                let byValue = PrimeFieldElement<M>(flipping(t, limb: limb, bit: 7))
                XCTAssertFalse(PrimeFieldElement<M>(t) == byValue, "value limb \(limb)")
            }
        }
        // m ≡ 0: the reduction makes equal values equal whatever integer they came from.
        XCTAssertTrue(PrimeFieldElement<M>(M.modulus) == .zero)
        XCTAssertTrue(PrimeFieldElement<M>(M.modulus.addingWithCarry(UInt256(5)).0) == PrimeFieldElement<M>(5))
    }

    func testPrimeFieldsDifferInEachLimb() throws {
        try checkPrimeField(BN254FieldModulus.self)
        try checkPrimeField(BN254ScalarModulus.self)
    }

    private func randomFp() throws -> Fp { Fp(try randomBelow253()) }

    func testFp2AndFp4DifferInEachCoefficient() throws {
        for _ in 0..<10 {
            let a = try randomFp(), b = try randomFp(), delta = Fp.one
            let x = Fp2(a, b)
            XCTAssertTrue(x == Fp2(a, b))
            XCTAssertEqual(x.equalMask(Fp2(a, b)), ~0)
            XCTAssertFalse(x == Fp2(a + delta, b))
            XCTAssertFalse(x == Fp2(a, b + delta))
            XCTAssertEqual(x.equalMask(Fp2(a, b + delta)), 0)

            let c = Fp2(try randomFp(), try randomFp())
            let y = Fp4(x, c)
            XCTAssertTrue(y == Fp4(Fp2(a, b), c))
            XCTAssertFalse(y == Fp4(Fp2(a + delta, b), c))
            XCTAssertFalse(y == Fp4(Fp2(a, b + delta), c))
            XCTAssertFalse(y == Fp4(x, c + .one))
            XCTAssertFalse(y == Fp4(x, Fp2(c.a, c.b + delta)))
            XCTAssertEqual(y.equalMask(Fp4(x, c + .one)), 0)
        }
    }

    func testFp12DiffersInEachCoefficient() throws {
        for _ in 0..<5 {
            let coefficients = try (0..<12).map { _ in try randomFp() }
            let x = Fp12(coefficients: coefficients)
            XCTAssertTrue(x == Fp12(coefficients: coefficients))
            XCTAssertEqual(x.equalMask(Fp12(coefficients: coefficients)), ~0)
            for i in 0..<12 {
                var changed = coefficients
                changed[i] = changed[i] + .one
                let y = Fp12(coefficients: changed)
                XCTAssertFalse(x == y, "coefficient \(i)")
                XCTAssertEqual(x.equalMask(y), 0, "coefficient \(i)")
            }
        }
        XCTAssertTrue(Fp12.one.isOne)
        XCTAssertFalse((Fp12.one + .one).isOne)
    }

    /// `p` with every coordinate scaled by `lambda`: the same projective point.
    private func rescaled<C>(_ p: ProjectivePoint<C>, by lambda: C.F) -> ProjectivePoint<C> {
        ProjectivePoint(x: p.x * lambda, y: p.y * lambda, z: p.z * lambda)
    }

    func testG1PointsEqualUnderDifferentZ() throws {
        for _ in 0..<5 {
            let p = G1Point.generator.multiplied(by: try randomNonZeroFr().value)
            let q = G1Point.generator.multiplied(by: try randomNonZeroFr().value)
            let lambda = Fp(try randomBelow253()) + .one
            XCTAssertTrue(p == rescaled(p, by: lambda))
            XCTAssertTrue(rescaled(p, by: lambda) == rescaled(p, by: lambda + lambda))
            XCTAssertFalse(p == q)
            XCTAssertFalse(p == -p)
            XCTAssertFalse(rescaled(p, by: lambda) == -p)
            XCTAssertFalse(p == .infinity)
            XCTAssertFalse(G1Point.infinity == p)
            // Same X/Z, different Y/Z, and the reverse.
            XCTAssertFalse(p == G1Point(x: p.x, y: p.y + p.z, z: p.z))
            XCTAssertFalse(p == G1Point(x: p.x + p.z, y: p.y, z: p.z))
        }
        // Infinity is (0 : Y : 0) for any non-zero Y.
        XCTAssertTrue(G1Point.infinity == G1Point(x: .zero, y: Fp(7), z: .zero))
        XCTAssertTrue(G1Point.generator + (-G1Point.generator) == .infinity)
    }

    func testG2PointsEqualUnderDifferentZ() throws {
        for _ in 0..<3 {
            let p = G2Point.generator.multiplied(by: try randomNonZeroFr().value)
            let q = G2Point.generator.multiplied(by: try randomNonZeroFr().value)
            let lambda = Fp2(try randomFp(), try randomFp() + .one)
            XCTAssertTrue(p == rescaled(p, by: lambda))
            XCTAssertFalse(p == q)
            XCTAssertFalse(p == -p)
            XCTAssertFalse(p == .infinity)
            XCTAssertFalse(p == G2Point(x: p.x, y: p.y + p.z, z: p.z))
        }
        XCTAssertTrue(G2Point.infinity == G2Point(x: .zero, y: Fp2(Fp(3), Fp(4)), z: .zero))
    }
}
