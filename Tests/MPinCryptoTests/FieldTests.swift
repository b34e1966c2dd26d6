import COpenSSL
import MPinCrypto
import MPinVectorCheck
import XCTest

/// UInt256, Fp and Fr unit tests; modular results are checked against OpenSSL's BIGNUM.
final class FieldTests: XCTestCase {
    // MARK: UInt256

    func testHexAndBytesRoundTrip() throws {
        let hex = "2400000008702a0db0bddf647a6366d3243fd6ee18093ee1be6623ef5c1b55b3"
        guard let v = UInt256(hex: hex) else { return XCTFail("hex rejected") }
        XCTAssertEqual(hexString(v.bigEndianBytes), hex)
        XCTAssertEqual(UInt256(hex: hex.uppercased()), v, "upper-case digits")
        XCTAssertEqual(v.w3, 0x2400_0000_0870_2a0d)
        XCTAssertEqual(v.w0, 0xbe66_23ef_5c1b_55b3)
        // Short strings are left-padded.
        XCTAssertEqual(UInt256(hex: "1"), UInt256(1))
        XCTAssertEqual(UInt256(hex: "abc"), UInt256(0xabc))
        XCTAssertEqual(UInt256(hex: "10000000000000000"), UInt256(0, 1, 0, 0), "2^64")
        XCTAssertEqual(hexString(UInt256(hex: "ff")!.bigEndianBytes), String(repeating: "0", count: 62) + "ff")
        // Rejections.
        XCTAssertNil(UInt256(hex: ""))
        XCTAssertNil(UInt256(hex: "0x12"))
        XCTAssertNil(UInt256(hex: "12g4"))
        XCTAssertNil(UInt256(hex: String(repeating: "1", count: 65)))
        XCTAssertNotNil(UInt256(hex: String(repeating: "f", count: 64)))
        XCTAssertNil(UInt256(bigEndian: [UInt8](repeating: 0, count: 31)))
        XCTAssertNil(UInt256(bigEndian: [UInt8](repeating: 0, count: 33)))

        for _ in 0..<100 {
            let bytes = try randomBytes(32)
            guard let x = UInt256(bigEndian: bytes) else { return XCTFail("32 bytes rejected") }
            XCTAssertEqual(x.bigEndianBytes, bytes)
            XCTAssertEqual(UInt256(hex: hexString(bytes)), x)
            // Bytes read from an array slice at an offset.
            let padded = [0xaa] + bytes + [0xbb]
            XCTAssertEqual(UInt256(bigEndian: padded[1..<33]), x)
            var out = [UInt8](repeating: 0, count: 40)
            x.writeBigEndian(into: &out, at: 5)
            XCTAssertEqual(Array(out[5..<37]), bytes)
            XCTAssertEqual(out[0..<5].allSatisfy { $0 == 0 } && out[37...].allSatisfy { $0 == 0 }, true)
        }
    }

    func testBitsAndComparisons() throws {
        let v = UInt256(hex: "8000000000000000000000000000000100000000000000020000000000000005")!
        XCTAssertEqual(v.bit(0), 1)
        XCTAssertEqual(v.bit(1), 0)
        XCTAssertEqual(v.bit(2), 1)
        XCTAssertEqual(v.bit(65), 1)
        XCTAssertEqual(v.bit(128), 1)
        XCTAssertEqual(v.bit(255), 1)
        XCTAssertEqual(v.bit(256), 0)
        XCTAssertEqual(v.bitLength, 256)
        XCTAssertEqual(v.bits(at: 0, width: 4), 5)
        XCTAssertEqual(UInt256.zero.bitLength, 0)
        XCTAssertEqual(UInt256(1).bitLength, 1)
        XCTAssertEqual(fieldPrime.bitLength, 254)
        XCTAssertEqual(groupOrder.bitLength, 254)
        XCTAssertNotEqual(groupOrder.lessThanMask(fieldPrime), 0, "r < p")
        XCTAssertEqual(fieldPrime.lessThanMask(groupOrder), 0)
        XCTAssertEqual(fieldPrime.lessThanMask(fieldPrime), 0)
        XCTAssertEqual(UInt256.zero.isZeroMask, ~0)
        XCTAssertEqual(UInt256(0, 0, 0, 1).isZeroMask, 0)
        let (sum, carry) = UInt256(~0, ~0, ~0, ~0).addingWithCarry(UInt256(1))
        XCTAssertEqual(sum, .zero)
        XCTAssertEqual(carry, 1)
        let (diff, borrow) = UInt256.zero.subtractingWithBorrow(UInt256(1))
        XCTAssertEqual(diff, UInt256(~0, ~0, ~0, ~0))
        XCTAssertEqual(borrow, 1)
        XCTAssertEqual(UInt256(0, 1, 0, 0).shiftedRight1, UInt256(1 << 63))
    }

    // MARK: Fp

    func testFpCanonicalBytes() {
        XCTAssertNil(Fp(canonicalBytes: fieldPrime.bigEndianBytes), "p is not canonical")
        XCTAssertNil(Fp(canonicalBytes: [UInt8](repeating: 0xff, count: 32)))
        let (pMinus1, _) = fieldPrime.subtractingWithBorrow(UInt256(1))
        XCTAssertEqual(Fp(canonicalBytes: pMinus1.bigEndianBytes), -Fp.one, "p − 1 = −1")
        XCTAssertEqual(Fp(canonicalBytes: [UInt8](repeating: 0, count: 32)), .zero)
        XCTAssertNil(Fp(canonicalBytes: [UInt8](repeating: 0, count: 31)), "wrong length")
        XCTAssertNil(Fp(canonicalBytes: [UInt8](repeating: 0, count: 33)), "wrong length")
        XCTAssertNil(Fr(canonicalBytes: groupOrder.bigEndianBytes), "r is not a canonical scalar")
        // p itself reduces to zero through the general constructor.
        XCTAssertEqual(Fp(fieldPrime), .zero)
        XCTAssertEqual(Fr(groupOrder), .zero)
    }

    func testFpAgainstOpenSSL() throws {
        let ctx = try BNContext()
        let (pMinus2, _) = fieldPrime.subtractingWithBorrow(UInt256(2))
        for i in 0..<100 {
            let a = UInt256(bigEndian: try randomBytes(32))!
            let b = UInt256(bigEndian: try randomBytes(32))!
            let fa = Fp(a), fb = Fp(b)
            XCTAssertEqual(fa.value, try OpenSSLMod.reduce(a, fieldPrime, ctx), "Fp(a) = a mod p (\(i))")
            XCTAssertEqual((fa * fb).value, try OpenSSLMod.mul(a, b, fieldPrime, ctx), "a·b mod p (\(i))")
            XCTAssertEqual((fa + fb) - fb, fa)
            XCTAssertEqual(fa - fa, .zero)
            XCTAssertEqual(fa + (-fa), .zero)
            XCTAssertEqual(fa.squared, fa * fa)
            XCTAssertEqual(fa.doubled, fa + fa)
            if !fa.isZero {
                XCTAssertEqual(fa * fa.inverse, .one, "x·x⁻¹ = 1 (\(i))")
                if i < 20 {
                    XCTAssertEqual(fa.inverse.value, try OpenSSLMod.inverse(fa.value, fieldPrime, ctx), "x⁻¹ (\(i))")
                }
            }
            if i < 20 {
                XCTAssertEqual(fa.power(b).value, try OpenSSLMod.power(fa.value, b, fieldPrime, ctx), "a^b mod p (\(i))")
                XCTAssertEqual(fa.power(pMinus2), fa.inverse)
            }
            XCTAssertEqual(fa.parity, fa.value.w0 & 1)
            XCTAssertEqual(Fp(canonicalBytes: fa.bytes), fa)
        }
        XCTAssertEqual(Fp.zero.inverse, .zero, "0⁻¹ is defined as 0")
        XCTAssertEqual(Fp.one.inverse, .one)
        XCTAssertEqual(Fp(2) * Fp(2).inverse, .one)
    }

    func testFrReduction() throws {
        let ctx = try BNContext()
        let allOnes = UInt256(~0, ~0, ~0, ~0)
        // 2^256 − 1 = 7r + rest with rest < r (r ≈ 0.14·2^256): subtract r seven times.
        var rest = allOnes
        for _ in 0..<7 { rest = rest.subtractingWithBorrow(groupOrder).0 }
        XCTAssertNotEqual(rest.lessThanMask(groupOrder), 0, "2^256 − 1 − 7r < r")
        XCTAssertEqual(Fr(allOnes).value, rest, "Fr(2^256 − 1)")
        XCTAssertEqual(Fr(allOnes).value, try OpenSSLMod.reduce(allOnes, groupOrder, ctx))
        XCTAssertEqual(Fp(allOnes).value, try OpenSSLMod.reduce(allOnes, fieldPrime, ctx), "Fp(2^256 − 1)")
        // Fr arithmetic against OpenSSL.
        for i in 0..<50 {
            let a = UInt256(bigEndian: try randomBytes(32))!, b = UInt256(bigEndian: try randomBytes(32))!
            XCTAssertEqual((Fr(a) * Fr(b)).value, try OpenSSLMod.mul(a, b, groupOrder, ctx), "a·b mod r (\(i))")
            XCTAssertEqual(Fr(a).value, try OpenSSLMod.reduce(a, groupOrder, ctx), "a mod r (\(i))")
            let fa = Fr(a)
            if !fa.isZero { XCTAssertEqual(fa * fa.inverse, .one) }
        }
    }

    func testRandomScalarsAreReduced() throws {
        var seen = Set<[UInt8]>()
        for _ in 0..<100 {
            let s = try SystemRandom.scalar()
            XCTAssertEqual(s.count, 32)
            XCTAssertNotEqual(UInt256(bigEndian: s)!.lessThanMask(groupOrder), 0, "scalar < r")
            seen.insert(s)
        }
        XCTAssertEqual(seen.count, 100, "random scalars are distinct")
        XCTAssertEqual(try SystemRandom.bytes(0), [])
        XCTAssertEqual(try SystemRandom.bytes(1000).count, 1000)
    }

    // MARK: Extension fields

    func testExtensionFieldIdentities() throws {
        func rfp() throws -> Fp { Fp(UInt256(bigEndian: try randomBytes(32))!) }
        for _ in 0..<10 {
            let a = Fp2(try rfp(), try rfp()), b = Fp2(try rfp(), try rfp())
            XCTAssertEqual(a * b, b * a)
            XCTAssertEqual(a.squared, a * a)
            XCTAssertEqual(a * a.inverse, .one)
            XCTAssertEqual(a.timesXi, a * Fp2(.one, .one), "ξ = 1 + i")
            XCTAssertEqual(Fp2(.zero, .one).squared, -Fp2.one, "i² = −1")
            let c = Fp4(a, b), d = Fp4(b, a)
            XCTAssertEqual(c * d, d * c)
            XCTAssertEqual(c.squared, c * c)
            XCTAssertEqual(c * c.inverse, .one)
            XCTAssertEqual(c.timesS, c * Fp4(.zero, .one))
            let coefficients = try (0..<12).map { _ in try rfp() }
            let x = Fp12(coefficients: coefficients)
            XCTAssertEqual(x.coefficients, coefficients)
            XCTAssertEqual(x.squared, x * x)
            XCTAssertEqual(x * x.inverse, .one)
            XCTAssertEqual((x.frobenius * x).frobenius, x.frobenius(2) * x.frobenius, "Frobenius is multiplicative")
        }
        XCTAssertEqual(Fp2.zero.inverse, .zero)
        XCTAssertEqual(Fp12.zero.inverse, .zero)
    }

    // MARK: Legendre symbol

    /// The binary Legendre symbol against Euler's criterion x^((p−1)/2).
    func testLegendreSymbolMatchesEulerCriterion() throws {
        let halfPMinus1 = UInt256(hex: "1200000004381506d85eefb23d31b369921feb770c049f70df3311f7ae0daad9")!
        XCTAssertEqual(Fp.zero.legendreSymbol, 0)
        XCTAssertEqual(Fp.one.legendreSymbol, 1)
        XCTAssertEqual((-Fp.one).legendreSymbol, -1, "p ≡ 3 (mod 4)")
        XCTAssertEqual(Fp(2).legendreSymbol, Fp(2).power(publicExponent: halfPMinus1) == .one ? 1 : -1)
        for _ in 0..<200 {
            let x = Fp(UInt256(bigEndian: try randomBytes(32))!)
            let euler = x.power(publicExponent: halfPMinus1)
            let expected = x.isZero ? 0 : (euler == .one ? 1 : -1)
            XCTAssertEqual(x.legendreSymbol, expected)
            if !x.isZero {
                XCTAssertEqual(x.squared.legendreSymbol, 1, "a square")
                XCTAssertEqual((-x.squared).legendreSymbol, -1, "minus a square")
            }
        }
    }
}
