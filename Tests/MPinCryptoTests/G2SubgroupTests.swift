import MPinCrypto
import XCTest

/// The G2 membership test (ψ(Q) = [t − 1]Q) against the definition r·Q = O, on points inside
/// and outside G2.
final class G2SubgroupTests: XCTestCase {
    /// The cofactor of G2 in the twist: #E'(Fp2) = r·(2p − r).
    static let cofactor: UInt256 = {
        let (twoP, _) = fieldPrime.addingWithCarry(fieldPrime)
        return twoP.subtractingWithBorrow(groupOrder).0
    }()

    /// A random point of the twist (almost surely outside G2).
    private func randomTwistPoint() throws -> G2Point {
        while true {
            let x = Fp2(Fp(UInt256(bigEndian: try randomBytes(32))!), Fp(UInt256(bigEndian: try randomBytes(32))!))
            if let p = G2Point(x: x) { return p }
        }
    }

    func testMembershipAgreesWithDefinition() throws {
        XCTAssertTrue(G2Point.generator.isInPrimeOrderSubgroup)
        for _ in 0..<8 {
            let inside = G2Point.generator.multiplied(by: try randomNonZeroFr().value)
            XCTAssertTrue(inside.isInPrimeOrderSubgroup, "k·Q")
            let outside = try randomTwistPoint()
            XCTAssertTrue(outside.isOnCurve)
            let byDefinition = outside.multiplied(by: groupOrder).isInfinity
            XCTAssertFalse(byDefinition, "a random twist point is outside G2")
            XCTAssertEqual(outside.isInPrimeOrderSubgroup, byDefinition, "random twist point")
            // Clearing the cofactor lands in G2; adding a G2 point to an outside one does not.
            let cleared = outside.multiplied(by: Self.cofactor)
            XCTAssertTrue(cleared.multiplied(by: groupOrder).isInfinity)
            XCTAssertTrue(cleared.isInPrimeOrderSubgroup, "cofactor-cleared point")
            XCTAssertFalse((outside + inside).isInPrimeOrderSubgroup, "outside + inside")
        }
    }

    /// Cofactor-only points (order dividing 2p − r, not 1) are refused, and a decoded point of
    /// that kind reports `.notInSubgroup`.
    func testSmallOrderPointsRefused() throws {
        var found = 0
        for _ in 0..<8 {
            let p = try randomTwistPoint().multiplied(by: groupOrder) // order divides the cofactor
            if p.isInfinity { continue }
            found += 1
            XCTAssertFalse(p.isInPrimeOrderSubgroup, "point of cofactor order")
            let encoded = try p.encoded()
            assertThrows(.notInSubgroup, "decoding a point of cofactor order") { () throws(MPinCryptoError) in
                try G2Point(bytes: encoded)
            }
            assertThrows(.notInSubgroup, "a DVS key of cofactor order") { () throws(MPinCryptoError) in
                try DVSPublicKey(bytes: encoded)
            }
        }
        XCTAssertGreaterThan(found, 0)
    }
}
