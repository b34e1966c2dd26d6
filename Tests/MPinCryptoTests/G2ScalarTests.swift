import MPinCrypto
import XCTest

/// `multipliedInG2(by:)` (the four-way ψ split) against the generic windowed multiplication, on the
/// generator and on random points of G2, for scalars at the edges of the split.
final class G2ScalarTests: XCTestCase {
    /// λ = 6u² = t − 1, ψ's eigenvalue on G2, written out (not taken from the library).
    static let lambda = UInt256(hex: "600000000b4038130054634925303646")!

    func scalars() throws -> [UInt256] {
        let one = UInt256(1)
        let lambdaMinus1 = Self.lambda.subtractingWithBorrow(one).0
        let lambdaPlus1 = Self.lambda.addingWithCarry(one).0
        let rMinus1 = groupOrder.subtractingWithBorrow(one).0
        // q·λ − 1 and q·λ for the largest quotient q = ⌊(r − 1)/λ⌋: the split's last quotient.
        let q = UInt256(hex: "600000000b403811805463490eafc622")!
        let qLambda = q.multipliedFullWidth(by: Self.lambda).low
        var list: [UInt256] = [.zero, one, UInt256(2), UInt256(15), UInt256(16), Self.lambda, lambdaMinus1, lambdaPlus1,
                               rMinus1, groupOrder, groupOrder.addingWithCarry(one).0, qLambda,
                               qLambda.subtractingWithBorrow(one).0, UInt256(~0, ~0, ~0, ~0)]
        for _ in 0..<12 { list.append(UInt256(bigEndian: try SystemRandom.scalar())!) }
        return list
    }

    func testAgreesWithGenericMultiplication() throws {
        let points = [G2Point.generator, G2Point.generator.multiplied(by: try randomNonZeroFr().value)]
        for p in points {
            for k in try scalars() {
                assertSamePoint(p.multipliedInG2(by: k), p.multiplied(by: k), "k·Q, k = \(k.bigEndianBytes)")
            }
        }
    }

    func testGeneratorTablesAgreeWithGenericMultiplication() throws {
        for k in try scalars() {
            assertSamePoint(G2Point.generatorMultiple(k), G2Point.generator.multiplied(by: k), "k·Q, k = \(k.bigEndianBytes)")
        }
    }

    func testLinearity() throws {
        let a = try randomNonZeroFr(), b = try randomNonZeroFr()
        let q = G2Point.generator
        assertSamePoint(q.multipliedInG2(by: (a + b).value), q.multipliedInG2(by: a.value) + q.multipliedInG2(by: b.value), "(a+b)Q")
        assertSamePoint(q.multipliedInG2(by: (a * b).value), q.multipliedInG2(by: a.value).multipliedInG2(by: b.value), "(ab)Q")
        XCTAssertTrue(q.multipliedInG2(by: groupOrder).isInfinity, "r·Q")
    }
}
