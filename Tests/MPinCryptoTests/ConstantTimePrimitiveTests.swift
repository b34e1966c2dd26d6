import MPinCrypto
import XCTest

/// The barrier-guarded primitives every constant-time path rests on (docs/CRYPTO.md §11):
/// `UInt256.select` and `subtractingIfFits` (CValueBarrier's asm on x86-64) must give the
/// same answers as plain, branching arithmetic, at the boundaries where a wrong carry, a
/// reversed condition or an operand the asm statement clobbered would show.
final class ConstantTimePrimitiveTests: XCTestCase {
    let p = BN254FieldModulus.modulus

    /// The branching reference: v − m when v ≥ m, else v.
    func reference(_ v: UInt256, _ m: UInt256) -> UInt256 {
        let (d, borrow) = v.subtractingWithBorrow(m)
        return borrow == 0 ? d : v
    }

    func testSelectTakesExactlyOneOperand() throws {
        let a = UInt256(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210, .max, 1)
        let b = UInt256(.max, 0, 0x5555_5555_5555_5555, 0x8000_0000_0000_0000)
        XCTAssertEqual(UInt256.select(.max, a, b), a)
        XCTAssertEqual(UInt256.select(0, a, b), b)
        XCTAssertEqual(UInt256.select(.max, a, a), a)
        for _ in 0..<50 {
            let x = UInt256(bigEndian: try randomBytes(32))!, y = UInt256(bigEndian: try randomBytes(32))!
            XCTAssertEqual(UInt256.select(.max, x, y), x)
            XCTAssertEqual(UInt256.select(0, x, y), y)
        }
    }

    func testSubtractingIfFitsAtTheBoundaries() throws {
        let one = UInt256(1)
        let pMinus1 = p.subtractingWithBorrow(one).0
        let pPlus1 = p.addingWithCarry(one).0
        let twoPMinus1 = p.addingWithCarry(pMinus1).0
        // Below m: unchanged; at or above m (up to 2m − 1): m less.
        XCTAssertEqual(UInt256.zero.subtractingIfFits(p), .zero)
        XCTAssertEqual(pMinus1.subtractingIfFits(p), pMinus1)
        XCTAssertEqual(p.subtractingIfFits(p), .zero)
        XCTAssertEqual(pPlus1.subtractingIfFits(p), one)
        XCTAssertEqual(twoPMinus1.subtractingIfFits(p), pMinus1)
        // A borrow that crosses every limb, and one that stops in the top limb.
        let m = UInt256(1, 0, 0, 1)
        XCTAssertEqual(UInt256(0, 0, 0, 1).subtractingIfFits(m), UInt256(0, 0, 0, 1))
        XCTAssertEqual(UInt256(0, 0, 0, 2).subtractingIfFits(m), UInt256(.max, .max, .max, 0))
        for _ in 0..<200 {
            var bytes = try randomBytes(32)
            bytes[0] &= 0x7f // below 2^255, as the field code's operands are
            let v = UInt256(bigEndian: bytes)!
            XCTAssertEqual(v.subtractingIfFits(p), reference(v, p))
            let mm = UInt256(bigEndian: try randomBytes(32))!
            XCTAssertEqual(v.subtractingIfFits(mm), reference(v, mm))
        }
    }

    /// The masks the helpers make, through the public operations that use them.
    func testMaskHelpersThroughTheirUsers() throws {
        let a = UInt256(5), b = UInt256(7)
        XCTAssertEqual(a.lessThanMask(b), .max)
        XCTAssertEqual(b.lessThanMask(a), 0)
        XCTAssertEqual(a.lessThanMask(a), 0)
        XCTAssertEqual(UInt256.zero.isZeroMask, .max)
        XCTAssertEqual(UInt256(0, 0, 0, 1 << 63).isZeroMask, 0)
        XCTAssertEqual(a.equalMask(a), .max)
        XCTAssertEqual(a.equalMask(UInt256(5, 0, 0, 1)), 0)
        // Field addition and subtraction around the modulus (both use the guarded paths).
        let pMinus1 = Fp(p.subtractingWithBorrow(UInt256(1)).0)
        XCTAssertEqual(pMinus1 + .one, .zero)
        XCTAssertEqual(Fp.zero - .one, pMinus1)
        XCTAssertEqual((pMinus1 + pMinus1).value, p.subtractingWithBorrow(UInt256(2)).0)
    }
}
