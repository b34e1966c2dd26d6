import MPinCrypto
import XCTest

/// The product by a Miller-loop line (`Fp12.multipliedBySparseLine`, the Karatsuba over Fp4 with
/// lazily reduced Fp4 products that the Miller loop runs) against a schoolbook product over Fp2
/// written here: Fp12 as Fp2[t]/(t⁶ − ξ), coefficient k of t^k,
/// t⁰ = a.a, t¹ = b.a, t² = c.a, t³ = a.b, t⁴ = b.b, t⁵ = c.b. Coefficients of p − 1 make
/// every double-width piece as large as it can be, so a sum that overflowed its bound or a
/// lost carry would show.
final class SparseLineProductTests: XCTestCase {
    private static let pMinus1 = -Fp.one

    private func powers(_ x: Fp12) -> [Fp2] { [x.a.a, x.b.a, x.c.a, x.a.b, x.b.b, x.c.b] }

    private func element(_ k: [Fp2]) -> Fp12 { Fp12(Fp4(k[0], k[3]), Fp4(k[1], k[4]), Fp4(k[2], k[5])) }

    /// f · (l0 + l1·t + l3·t³), 18 Fp2 products; t^(6+j) = ξ·t^j.
    private func schoolbook(_ f: Fp12, l0: Fp2, l1: Fp2, l3: Fp2) -> Fp12 {
        let x = powers(f)
        var out = [Fp2](repeating: .zero, count: 6)
        for (shift, l) in [(0, l0), (1, l1), (3, l3)] {
            for k in 0..<6 {
                let product = x[k] * l
                let j = k + shift
                if j < 6 { out[j] = out[j] + product } else { out[j - 6] = out[j - 6] + product.timesXi }
            }
        }
        return element(out)
    }

    private func randomFp() throws -> Fp { Fp(UInt256(bigEndian: try SystemRandom.bytes(32))!) }
    private func randomFp2() throws -> Fp2 { Fp2(try randomFp(), try randomFp()) }

    func testRandomInputsMatchSchoolbook() throws {
        for _ in 0..<200 {
            let f = element(try (0..<6).map { _ in try randomFp2() })
            let (l0, l1, l3) = (try randomFp2(), try randomFp2(), try randomFp2())
            XCTAssertEqual(f.multipliedBySparseLine(l0: l0, l1: l1, l3: l3), schoolbook(f, l0: l0, l1: l1, l3: l3))
        }
    }

    /// Every mix of 0, 1 and p − 1 in the line, with f all p − 1, all 1, and mixed.
    func testEdgeCoefficientsMatchSchoolbook() throws {
        let m = Self.pMinus1
        let edges: [Fp2] = [.zero, .one, Fp2(m, m), Fp2(m, .zero), Fp2(.zero, m), Fp2(.one, m)]
        let fs: [Fp12] = [
            element([Fp2](repeating: Fp2(m, m), count: 6)),
            element([Fp2](repeating: .one, count: 6)),
            element([Fp2(m, .zero), Fp2(.zero, m), Fp2(m, m), .one, .zero, Fp2(m, .one)]),
            .one, .zero,
        ]
        for f in fs {
            for l0 in edges {
                for l1 in edges {
                    for l3 in edges {
                        XCTAssertEqual(f.multipliedBySparseLine(l0: l0, l1: l1, l3: l3),
                                       schoolbook(f, l0: l0, l1: l1, l3: l3))
                    }
                }
            }
        }
    }

    /// The product by a full line element agrees with the generic Fp12 product too (the
    /// schoolbook reference checked against the library's multiplication).
    func testSchoolbookReferenceAgreesWithFp12Product() throws {
        for _ in 0..<20 {
            let f = element(try (0..<6).map { _ in try randomFp2() })
            let (l0, l1, l3) = (try randomFp2(), try randomFp2(), try randomFp2())
            let line = Fp12(Fp4(l0, l3), Fp4(l1, .zero), .zero)
            XCTAssertEqual(schoolbook(f, l0: l0, l1: l1, l3: l3), f * line)
        }
    }
}
