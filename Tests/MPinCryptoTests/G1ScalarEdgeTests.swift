import MPinCrypto
import XCTest

/// G1 scalar multiplication (the GLV path) at the edges of the scalar range, where the
/// split into k1 + k2·λ and its signs are most likely to go wrong.
final class G1ScalarEdgeTests: XCTestCase {
    private let r = BN254ScalarModulus.modulus
    private let g = G1Point.generator

    private func assertSame(_ a: G1Point, _ b: G1Point, _ message: String, line: UInt = #line) {
        XCTAssertTrue(a == b, message, line: line)
    }

    func testEdgeScalars() {
        XCTAssertTrue(g.multiplied(by: .zero).isInfinity, "0·G")
        assertSame(g.multiplied(by: UInt256(1)), g, "1·G")
        assertSame(g.multiplied(by: UInt256(2)), g.doubled, "2·G")
        XCTAssertTrue(g.multiplied(by: r).isInfinity, "r·G")
        let rMinus1 = r.subtractingWithBorrow(UInt256(1)).0
        assertSame(g.multiplied(by: rMinus1), -g, "(r−1)·G")
        let rPlus1 = r.addingWithCarry(UInt256(1)).0
        assertSame(g.multiplied(by: rPlus1), g, "(r+1)·G")
        // 2^256 − 1 ≡ (2^256 − 1) mod r: both sides must agree.
        let allOnes = UInt256(.max, .max, .max, .max)
        assertSame(g.multiplied(by: allOnes), g.multiplied(by: Fr(allOnes).value), "(2^256−1)·G")
    }

    func testLinearityOnRandomScalars() throws {
        for _ in 0..<32 {
            let a = Fr(UInt256(bigEndian: try SystemRandom.scalar())!)
            let b = Fr(UInt256(bigEndian: try SystemRandom.scalar())!)
            let p = g.multiplied(by: UInt256(bigEndian: try SystemRandom.scalar())!)
            assertSame(p.multiplied(by: (a + b).value), p.multiplied(by: a.value) + p.multiplied(by: b.value), "(a+b)P")
            assertSame(p.multiplied(by: (a * b).value), p.multiplied(by: a.value).multiplied(by: b.value), "(ab)P")
            assertSame(p.multiplied(by: (-a).value), -p.multiplied(by: a.value), "(−a)P")
            // Small scalars against the PIN ladder, an independent method.
            let small = a.value.w0 & 0x3FFF
            assertSame(p.multiplied(by: UInt256(small)), p.multiplied(bySmall: small, bits: 14), "small k")
        }
    }
}

/// Hashing to G1 never traps on an input of the wrong size.
final class MapToG1InputTests: XCTestCase {
    func testAnyLengthMaps() {
        let digest = SHA256.hash(Array("id".utf8))
        XCTAssertTrue(G1Point.map(hash: digest + [1, 2, 3]) == G1Point.map(hash: digest), "only the first 32 bytes count")
        XCTAssertTrue(G1Point.map(hash: [UInt8]()).isOnCurve)
        XCTAssertTrue(G1Point.map(hash: [7]) == G1Point.map(hash: [UInt8](repeating: 0, count: 31) + [7]), "left padding")
    }

    /// Encoding several points with one shared inversion gives each point's own encoding.
    func testSharedInversionEncoding() throws {
        let g = G1Point.generator
        var points = [G1Point]()
        for _ in 0..<4 { points.append(g.multiplied(by: UInt256(bigEndian: try SystemRandom.scalar())!)) }
        points.append(g) // Z = 1
        for n in 1...points.count {
            let together = try G1Point.encoded(Array(points.prefix(n)))
            XCTAssertEqual(together, try points.prefix(n).map { try $0.encoded() }, "\(n) points")
        }
        XCTAssertEqual(try G1Point.encoded([]), [])
        XCTAssertThrowsError(try G1Point.encoded([g, .infinity, g]), "a point at infinity")
    }
}
