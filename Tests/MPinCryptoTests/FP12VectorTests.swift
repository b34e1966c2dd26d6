import MPinCrypto
import MPinVectorCheck
import XCTest

/// Milagro's Fp12 tower vectors (fp12_test_vector_BN254CX.txt). Values are plain integers.
final class FP12VectorTests: XCTestCase {
    private func blocks() throws -> [VectorBlock] { try milagroVectorBlocks("fp12") }

    private func fp12(_ t: VectorBlock, _ name: String) throws -> Fp12 { try parseFp12(try t.field(name)) }
    private func fp4(_ t: VectorBlock, _ name: String) throws -> Fp4 { try parseFp4(try t.field(name)) }

    private func check(_ got: Fp12, _ expected: Fp12, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        if got != expected {
            XCTFail("\(what):\n expected \(describe(expected))\n got      \(describe(got))", file: file, line: line)
        }
    }

    private func check(_ got: Fp4, _ expected: Fp4, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        if got != expected {
            XCTFail("\(what):\n expected \(describe(expected))\n got      \(describe(got))", file: file, line: line)
        }
    }

    private func thrice(_ v: Fp4) -> Fp4 { v + v + v }

    func testMultiplicationAndSquaring() throws {
        for t in try blocks() {
            let n = t.number
            let x1 = try fp12(t, "FP12_1"), x2 = try fp12(t, "FP12_2")
            check(x1 * x2, try fp12(t, "FP12mul"), "test \(n): FP12mul")
            check(x2 * x1, try fp12(t, "FP12mul"), "test \(n): FP12mul (commuted)")
            check(x1.squared, try fp12(t, "FP12square"), "test \(n): FP12square")
            check(x1.squared, try fp12(t, "FP12usquare"), "test \(n): FP12usquare")
            check(x1 * x1, try fp12(t, "FP12square"), "test \(n): FP12square as x·x")
            check(x1 * (try fp12(t, "FP12smul_y_dtype")), try fp12(t, "FP12smul_dtype"), "test \(n): FP12smul_dtype")
            check(x1 * (try fp12(t, "FP12smul_y_mtype")), try fp12(t, "FP12smul_mtype"), "test \(n): FP12smul_mtype")
        }
    }

    func testConjugateInverseFrobenius() throws {
        for t in try blocks() {
            let n = t.number
            let x1 = try fp12(t, "FP12_1")
            check(x1.conjugate, try fp12(t, "FP12conj"), "test \(n): FP12conj")
            check(x1.inverse, try fp12(t, "FP12inv"), "test \(n): FP12inv")
            check(x1 * x1.inverse, .one, "test \(n): x·x⁻¹")
            check(x1.frobenius, try fp12(t, "FP12frob"), "test \(n): FP12frob")
            check(x1.frobenius(1), try fp12(t, "FP12frob"), "test \(n): frobenius(1)")
            check(x1.frobenius(12), x1, "test \(n): frobenius¹² is the identity")
            check(x1.frobenius(6), x1.conjugate, "test \(n): frobenius⁶ is the conjugate")
        }
    }

    func testTraceAndCompressedPowers() throws {
        for t in try blocks() {
            let n = t.number
            let x1 = try fp12(t, "FP12_1"), c = try fp12(t, "FP12_c")
            check(thrice(x1.a), try fp4(t, "FP4trace"), "test \(n): FP4trace")
            let es = try bigInt(try t.field("BIGscs"))
            let e1 = try bigInt(try t.field("BIGsc1"))
            check(thrice(c.power(publicExponent: es).a), try fp4(t, "FP12compows"), "test \(n): FP12compows")
            check(thrice(c.power(publicExponent: e1).a), try fp4(t, "FP12compow"), "test \(n): FP12compow")
            // BIGsco is the group order: c lies in GT, so c^r = 1.
            let order = try bigInt(try t.field("BIGsco"))
            XCTAssertEqual(order, groupOrder, "test \(n): BIGsco is r")
            XCTAssertTrue(c.power(publicExponent: order).isOne, "test \(n): c^r = 1")
            XCTAssertFalse(c.isOne, "test \(n): c ≠ 1")
        }
    }

    func testPowers() throws {
        for t in try blocks() {
            let n = t.number
            let x = try (1...4).map { try fp12(t, "FP12_\($0)") }
            let e = try (1...4).map { try bigInt(try t.field("BIGsc\($0)")) }
            let expectedPow = try fp12(t, "FP12pow")
            check(x[0].power(publicExponent: e[0]), expectedPow, "test \(n): FP12pow (public exponent)")
            check(x[0].power(secretExponent: e[0]), expectedPow, "test \(n): FP12pow (secret exponent)")
            check(x[0].power(publicExponent: UInt256(UInt64(n))), try fp12(t, "FP12pinpow"), "test \(n): FP12pinpow")
            check(x[0].power(secretExponent: UInt256(UInt64(n))), try fp12(t, "FP12pinpow"),
                  "test \(n): FP12pinpow (secret exponent)")
            check(x[0].power(publicExponent: .zero), .one, "test \(n): x^0 (public exponent)")
            check(x[0].power(secretExponent: .zero), .one, "test \(n): x^0 (secret exponent)")
            check(x[0].power(publicExponent: UInt256(1)), x[0], "test \(n): x^1")
            var product = Fp12.one
            for i in 0..<4 { product = product * x[i].power(publicExponent: e[i]) }
            check(product, try fp12(t, "FP12pow4"), "test \(n): FP12pow4")
        }
    }

    /// Fp12(bytes:) / .bytes round trip on the vector values (plain integers, 12 × 32 bytes).
    func testByteRoundTrip() throws {
        for t in try blocks() {
            let x1 = try fp12(t, "FP12_1")
            let bytes = x1.bytes
            XCTAssertEqual(bytes.count, 384)
            let coefficients = try bracketedIntegers(try t.field("FP12_1"))
            XCTAssertEqual(bytes, coefficients.flatMap { $0.value.bigEndianBytes }, "test \(t.number): octet order")
            XCTAssertEqual(try Fp12(bytes: bytes), x1, "test \(t.number): decode(encode(x))")
        }
    }
}
