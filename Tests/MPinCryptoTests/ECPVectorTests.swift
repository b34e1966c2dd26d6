import MPinCrypto
import MPinVectorCheck
import XCTest

/// Milagro's G1 arithmetic vectors (ecp_test_vector_BN254CX.txt).
final class ECPVectorTests: XCTestCase {
    private func blocks() throws -> [VectorBlock] { try milagroVectorBlocks("ecp") }

    private func point(_ block: VectorBlock, _ name: String) throws -> G1Point {
        let (x, y) = try parseG1Coordinates(try block.field(name))
        return G1Point(affineX: x, y: y)
    }

    func testArithmetic() throws {
        for t in try blocks() {
            let n = t.number
            let p1 = try point(t, "ECP1"), p2 = try point(t, "ECP2")
            XCTAssertTrue(p1.isOnCurve, "test \(n): ECP1 on curve")
            XCTAssertTrue(p2.isOnCurve, "test \(n): ECP2 on curve")
            let k1 = try bigInt(try t.field("BIGscalar1"))
            let k2 = try bigInt(try t.field("BIGscalar2"))

            assertSamePoint(p1 + p2, try point(t, "ECPsum"), "test \(n): ECPsum")
            assertSamePoint(p2 + p1, try point(t, "ECPsum"), "test \(n): ECPsum (commuted)")
            assertSamePoint(-p1, try point(t, "ECPneg"), "test \(n): ECPneg")
            assertSamePoint(p1 - p2, try point(t, "ECPsub"), "test \(n): ECPsub")
            assertSamePoint(p1.doubled, try point(t, "ECPdbl"), "test \(n): ECPdbl")
            assertSamePoint(p1 + p1, try point(t, "ECPdbl"), "test \(n): ECPdbl as P+P")
            assertSamePoint(p1.multiplied(by: k1), try point(t, "ECPmul"), "test \(n): ECPmul")
            assertSamePoint(p1.multiplied(bySmall: 1234, bits: 14), try point(t, "ECPpinmul"), "test \(n): ECPpinmul")
            assertSamePoint(p1.multiplied(by: UInt256(1234)), try point(t, "ECPpinmul"),
                            "test \(n): ECPpinmul by the windowed method")
            assertSamePoint(p1.multiplied(by: k1) + p2.multiplied(by: k2), try point(t, "ECPmul2"), "test \(n): ECPmul2")

            // Results of the arithmetic stay on the curve.
            XCTAssertTrue((p1 + p2).isOnCurve, "test \(n): sum on curve")
            XCTAssertTrue(p1.multiplied(by: k1).isOnCurve, "test \(n): multiple on curve")
            // P − P is the point at infinity, which has no encoding.
            XCTAssertTrue((p1 - p1).isInfinity, "test \(n): P − P")
            assertThrows(.pointAtInfinity, "test \(n): encoding infinity") { () throws(MPinCryptoError) in
                try (p1 - p1).encoded()
            }
        }
    }

    func testSetXWithParity() throws {
        for t in try blocks() {
            let (x, _) = try parseG1Coordinates(try t.field("ECP1"))
            guard let even = G1Point(x: x, parity: 0), let odd = G1Point(x: x, parity: 1) else {
                XCTFail("test \(t.number): x of ECP1 rejected by G1Point(x:parity:)")
                continue
            }
            assertSamePoint(even, try point(t, "ECPeven"), "test \(t.number): ECPeven")
            assertSamePoint(odd, try point(t, "ECPodd"), "test \(t.number): ECPodd")
            XCTAssertEqual(even.affine?.y.parity, 0, "test \(t.number): even y")
            XCTAssertEqual(odd.affine?.y.parity, 1, "test \(t.number): odd y")
        }
    }

    func testDecoderRejectsWrongAndInfinity() throws {
        for t in try blocks() {
            for name in ["ECPwrong", "ECPinf"] {
                let c = try t.field(name).split(separator: ":")
                XCTAssertEqual(c.count, 2, "test \(t.number): \(name) format")
                guard c.count == 2 else { continue }
                let bytes = rawG1Encoding(x: try bigInt(String(c[0])), y: try bigInt(String(c[1])))
                assertThrows(.notOnCurve, "test \(t.number): decoding \(name)") { () throws(MPinCryptoError) in
                    try G1Point(bytes: bytes)
                }
            }
        }
    }

    func testEncodingRoundTrips() throws {
        let names = ["ECP1", "ECP2", "ECPsum", "ECPneg", "ECPsub", "ECPdbl", "ECPmul", "ECPpinmul", "ECPmul2",
                     "ECPeven", "ECPodd"]
        for t in try blocks() {
            for name in names {
                let (x, y) = try parseG1Coordinates(try t.field(name))
                let p = G1Point(affineX: x, y: y)
                let expected = rawG1Encoding(x: x.value, y: y.value)
                do throws(MPinCryptoError) {
                    let enc = try p.encoded()
                    XCTAssertEqual(enc, expected, "test \(t.number): encoding of \(name)")
                    let back = try G1Point(bytes: enc)
                    assertSamePoint(back, p, "test \(t.number): decode(encode(\(name)))")
                    // A projective representative with Z ≠ 1 encodes to the same bytes.
                    let z = Fp(UInt256(7 + UInt64(t.number)))
                    let scaled = G1Point(x: x * z, y: y * z, z: z)
                    XCTAssertEqual(try scaled.encoded(), expected, "test \(t.number): \(name) with Z ≠ 1")

                    let prefix = UInt8(0x02) | UInt8(y.parity)
                    let compressed = [prefix] + x.bytes
                    assertSamePoint(try G1Point(compressedBytes: compressed), p,
                                    "test \(t.number): compressed \(name)")
                    // The other prefix gives the negation.
                    let flipped = [prefix ^ 1] + x.bytes
                    assertSamePoint(try G1Point(compressedBytes: flipped), -p,
                                    "test \(t.number): compressed \(name) with the other parity")
                } catch {
                    XCTFail("test \(t.number): \(name): unexpected \(error)")
                }
            }
        }
    }
}
