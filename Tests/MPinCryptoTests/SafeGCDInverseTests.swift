import MPinCrypto
import XCTest

/// The safegcd inversion (`PrimeFieldElement.inverse`) against Fermat's (`fermatInverse`) and
/// the definition x·x⁻¹ = 1, in both fields, at the edges (0, 1, −1, 2, values with one limb
/// set or all bits set below the modulus) and on random values.
final class SafeGCDInverseTests: XCTestCase {
    func check<M: MontgomeryModulus>(_ x: PrimeFieldElement<M>, file: StaticString = #filePath, line: UInt = #line) {
        let inv = x.inverse
        XCTAssertEqual(inv, x.fermatInverse, "safegcd and Fermat disagree", file: file, line: line)
        if x.isZero {
            XCTAssertTrue(inv.isZero, "0 must map to 0", file: file, line: line)
        } else {
            XCTAssertEqual(x * inv, .one, "x·x⁻¹ ≠ 1", file: file, line: line)
        }
    }

    func edgeValues<M: MontgomeryModulus>(_: M.Type) -> [PrimeFieldElement<M>] {
        let m = M.modulus
        var values: [PrimeFieldElement<M>] = [.zero, .one, -.one, PrimeFieldElement<M>(2), -PrimeFieldElement<M>(2)]
        values.append(PrimeFieldElement<M>(m.subtractingWithBorrow(UInt256(1)).0.shiftedRight1)) // (m−1)/2
        for limb in 0..<4 {
            var w = [UInt64](repeating: 0, count: 4)
            w[limb] = 1
            values.append(PrimeFieldElement<M>(UInt256(w[0], w[1], w[2], w[3])))
            w[limb] = .max
            values.append(PrimeFieldElement<M>(UInt256(w[0], w[1], w[2], w[3])))
        }
        values.append(PrimeFieldElement<M>(UInt256(1 << 62, 0, 0, 0)))  // a limb boundary of the 62-bit form
        values.append(PrimeFieldElement<M>(UInt256(0, 0, 0, 1 << 56)))
        return values
    }

    func testAgreesWithFermatAndInverts() throws {
        for x in edgeValues(BN254FieldModulus.self) { check(x) }
        for x in edgeValues(BN254ScalarModulus.self) { check(x) }
        for _ in 0..<300 {
            check(Fp(UInt256(bigEndian: try randomBytes(32))!))
            check(Fr(UInt256(bigEndian: try randomBytes(32))!))
        }
    }

    /// The extension fields invert through Fp's inverse.
    func testExtensionInverses() throws {
        for _ in 0..<20 {
            let a = Fp2(Fp(UInt256(bigEndian: try randomBytes(32))!), Fp(UInt256(bigEndian: try randomBytes(32))!))
            XCTAssertEqual(a * a.inverse, .one)
            let f = Pairing.pairing(.generator, G1Point.generator.multiplied(by: UInt256(bigEndian: try randomBytes(32))!))
            XCTAssertEqual(f * f.inverse, .one)
        }
    }

    /// Montgomery's simultaneous inversion gives each element's own inverse, and a zero among
    /// them maps to zero without touching the others' (one zero used to make every output zero,
    /// which would make every line of a batched pairing 1).
    func testSimultaneousInversesWithAndWithoutZeros() throws {
        func randomFp() throws -> Fp { Fp(UInt256(bigEndian: try randomBytes(32))!) }
        for count in [1, 2, 3, 7] {
            let zeroPositions: [Int?] = [nil] + (0..<count).map { Optional($0) }
            for zeroAt in zeroPositions {
                var xs = try (0..<count).map { _ in try randomFp() }
                var ys = try (0..<count).map { _ in Fp2(try randomFp(), try randomFp()) }
                if let zeroAt { xs[zeroAt] = .zero; ys[zeroAt] = .zero }
                let xInverses = Fp.simultaneousInverses(xs)
                let yInverses = Fp2.simultaneousInverses(ys)
                for i in 0..<count {
                    XCTAssertEqual(xInverses[i], xs[i].inverse, "Fp, \(count) elements, zero at \(String(describing: zeroAt)), index \(i)")
                    XCTAssertEqual(yInverses[i], ys[i].inverse, "Fp2, \(count) elements, zero at \(String(describing: zeroAt)), index \(i)")
                    if i != zeroAt {
                        XCTAssertEqual(xs[i] * xInverses[i], .one)
                        XCTAssertEqual(ys[i] * yInverses[i], .one)
                    }
                }
            }
        }
        XCTAssertTrue(Fp.simultaneousInverses([]).isEmpty)
    }
}
