import MPinCrypto
import MPinVectorCheck
import XCTest

/// Milagro's G2 (twist) arithmetic vectors (ecp2_test_vector_BN254CX.txt). The input points
/// ECP21..ECP24 are on the twist but outside the order-r subgroup.
final class ECP2VectorTests: XCTestCase {
    private func blocks() throws -> [VectorBlock] { try milagroVectorBlocks("ecp2") }

    private func point(_ block: VectorBlock, _ name: String) throws -> G2Point {
        let (x, y) = try parseG2Coordinates(try block.field(name))
        return G2Point(affineX: x, y: y)
    }

    func testInputsAreOnTwistButNotInSubgroup() throws {
        for t in try blocks() {
            for k in 1...4 {
                let name = "ECP2\(k)"
                let (x, y) = try parseG2Coordinates(try t.field(name))
                let p = G2Point(affineX: x, y: y)
                XCTAssertTrue(p.isOnCurve, "test \(t.number): \(name) on the twist")
                XCTAssertFalse(p.isInPrimeOrderSubgroup, "test \(t.number): \(name) outside G2")
                let bytes = rawG2Encoding(x, y)
                assertThrows(.notInSubgroup, "test \(t.number): decoding \(name)") { () throws(MPinCryptoError) in
                    try G2Point(bytes: bytes)
                }
            }
        }
    }

    func testArithmetic() throws {
        for t in try blocks() {
            let n = t.number
            let q = try (1...4).map { try point(t, "ECP2\($0)") }
            let k = try (1...4).map { try bigInt(try t.field("BIGscalar\($0)")) }

            assertSamePoint(q[0] + q[1], try point(t, "ECP2sum"), "test \(n): ECP2sum")
            assertSamePoint(q[1] + q[0], try point(t, "ECP2sum"), "test \(n): ECP2sum (commuted)")
            assertSamePoint(-q[0], try point(t, "ECP2neg"), "test \(n): ECP2neg")
            assertSamePoint(q[0] - q[1], try point(t, "ECP2sub"), "test \(n): ECP2sub")
            assertSamePoint(q[0].doubled, try point(t, "ECP2dbl"), "test \(n): ECP2dbl")
            assertSamePoint(q[0] + q[0], try point(t, "ECP2dbl"), "test \(n): ECP2dbl as Q+Q")
            assertSamePoint(q[0].multiplied(by: k[0]), try point(t, "ECP2mul"), "test \(n): ECP2mul")
            var sum = G2Point.infinity
            for i in 0..<4 { sum = sum + q[i].multiplied(by: k[i]) }
            assertSamePoint(sum, try point(t, "ECP2mul4"), "test \(n): ECP2mul4")
            XCTAssertTrue(sum.isOnCurve, "test \(n): ECP2mul4 on the twist")
        }
    }

    func testSetX() throws {
        for t in try blocks() {
            let (x, _) = try parseG2Coordinates(try t.field("ECP21"))
            guard let p = G2Point(x: x) else {
                XCTFail("test \(t.number): G2Point(x:) rejected the x of ECP21")
                continue
            }
            let s1 = try point(t, "ECP2set1"), s2 = try point(t, "ECP2set2")
            XCTAssertTrue(p == s1 || p == s2,
                          "test \(t.number): G2Point(x:) gave \(describe(p)), not ECP2set1 or ECP2set2")
            // The two candidates are the point and its negation.
            assertSamePoint(s2, -s1, "test \(t.number): ECP2set2 = −ECP2set1")
        }
    }

    func testDecoderRejectsWrongAndInfinity() throws {
        for t in try blocks() {
            for name in ["ECP2wrong", "ECP2inf"] {
                let (x, y) = try parseG2Coordinates(try t.field(name))
                XCTAssertFalse(G2Point(affineX: x, y: y).isOnCurve, "test \(t.number): \(name) off the twist")
                let bytes = rawG2Encoding(x, y)
                assertThrows(.notOnCurve, "test \(t.number): decoding \(name)") { () throws(MPinCryptoError) in
                    try G2Point(bytes: bytes)
                }
            }
        }
    }

    /// Encode/decode round trips in G2 proper: multiples of the generator by the vector scalars.
    func testEncodingRoundTripsInG2() throws {
        for t in try blocks().prefix(4) {
            let k = try bigInt(try t.field("BIGscalar1"))
            let q = G2Point.generator.multiplied(by: k)
            do throws(MPinCryptoError) {
                let enc = try q.encoded()
                XCTAssertEqual(enc.count, 128)
                guard let (x, y) = q.affine else { XCTFail("infinity"); continue }
                XCTAssertEqual(enc, rawG2Encoding(x, y), "test \(t.number): layout X.a ‖ X.b ‖ Y.a ‖ Y.b")
                assertSamePoint(try G2Point(bytes: enc), q, "test \(t.number): decode(encode(k·Q))")
            } catch {
                XCTFail("test \(t.number): unexpected \(error)")
            }
        }
    }
}
