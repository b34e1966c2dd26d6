/// The optimal ate pairing e: G2 × G1 → GT ⊂ Fp12* on BN254CX, bit-compatible with
/// Milagro's `PAIR_ate` + `PAIR_fexp` (same loop, corrections and final exponentiation, so
/// the GT bytes match; docs/CRYPTO.md §1 gives a test value).
///
/// The sequence of field operations depends only on the public curve constants, never on
/// the points, so pairing a secret point (the server secret) is constant-time.
package enum Pairing {
    /// |u| for the BN parameter u = −0x4000000003C012B1.
    static let u0: UInt64 = 0x4000000003C012B1
    /// The Miller loop runs over n = |6u + 2| = 6|u| − 2 in signed digits taken from 3n and n
    /// (digit i = bit(3n, i) − bit(n, i), a NAF-like recoding).
    static let loopDigits: [Int8] = {
        // 6|u| − 2 exceeds 64 bits, so compute it in 128-bit arithmetic.
        let (hi6, lo6) = u0.multipliedFullWidth(by: 6)
        let (lo, borrow) = lo6.subtractingReportingOverflow(2)
        let nVal = UInt256(lo, hi6 - (borrow ? 1 : 0), 0, 0)
        let (n2, _) = nVal.addingWithCarry(nVal)
        let (n3, _) = n2.addingWithCarry(nVal)
        let bits = n3.bitLength
        var digits = [Int8]()
        for i in stride(from: bits - 2, through: 1, by: -1) {
            digits.append(Int8(n3.bit(i)) - Int8(nVal.bit(i)))
        }
        return digits
    }()

    /// e(Q, P), the reduced pairing value (Milagro's `PAIR_fexp(PAIR_ate(Q, P))`).
    package static func pairing(_ q: G2Point, _ p: G1Point) -> Fp12 {
        finalExponentiation(millerLoop([(q, p)]))
    }

    /// e(Q1, P1) · e(Q2, P2) with one shared Miller loop and one final exponentiation
    /// (Milagro's `PAIR_double_ate`), as the M-Pin server check uses.
    package static func doublePairing(_ q1: G2Point, _ p1: G1Point, _ q2: G2Point, _ p2: G1Point) -> Fp12 {
        finalExponentiation(millerLoop([(q1, p1), (q2, p2)]))
    }

    // MARK: Miller loop

    /// The non-adjacent form of |u|, most significant digit first (it is 1).
    static let uNAF: [Int8] = {
        var k = UInt128(u0)
        var digits = [Int8]()
        while k != 0 {
            var d: Int8 = 0
            if k & 1 == 1 {
                d = k & 3 == 1 ? 1 : -1
                k = d == 1 ? k - 1 : k + 1
            }
            digits.append(d)
            k >>= 1
        }
        return digits.reversed()
    }()

    /// The product of the Miller functions of all pairs, before the final exponentiation.
    /// Pairs with a point at infinity contribute 1. Each Q's lines are computed (`PreparedG2`)
    /// and then evaluated, the one loop both plain and prepared pairings run.
    ///
    /// All the points are made affine with one Fp inversion (Montgomery's simultaneous
    /// inversion of every P's Z and every Q's norm N(Z) = Z·conj(Z), with 1/Z = conj(Z)/N(Z) in
    /// Fp2), instead of one per Q and one for the P's: the same coordinates as `affine` gives,
    /// so the same lines. A point at infinity enters as 1 (by mask) and is skipped, the only
    /// branch, as in `G1Point.affine(of:)`.
    static func millerLoop(_ pairs: [(G2Point, G1Point)]) -> Fp12 {
        var denominators = [Fp]()
        denominators.reserveCapacity(2 * pairs.count)
        for (q, p) in pairs {
            let norm = q.z.a.squared + q.z.b.squared
            denominators.append(Fp.select(q.isInfinityMask, .one, norm))
            denominators.append(Fp.select(p.isInfinityMask, .one, p.z))
        }
        let inverses = Fp.simultaneousInverses(denominators)
        var prepared = [(PreparedG2, (x: Fp, y: Fp)?)]()
        prepared.reserveCapacity(pairs.count)
        for (i, (q, p)) in pairs.enumerated() {
            var lines = PreparedG2.infinity
            if !q.isInfinity {
                let n = inverses[2 * i]
                let zInverse = Fp2(q.z.a * n, -(q.z.b * n))
                lines = PreparedG2(affineX: q.x * zInverse, y: q.y * zInverse)
            }
            let zi = inverses[2 * i + 1]
            prepared.append((lines, p.isInfinity ? nil : (p.x * zi, p.y * zi)))
        }
        return millerLoop(prepared: prepared)
    }

    /// The two lines after the loop, for A = [n]Q: A ← −A, then the line through A and π(Q)
    /// (A ← A + π(Q)) and the line through A and −π²(Q).
    static func finalSteps(_ a: inout G2Point, qx: Fp2, qy: Fp2) -> (LineCoefficients, LineCoefficients) {
        let frob = FrobeniusConstants.shared
        a = -a
        // K = π(Q): conj(x)·f², conj(y)·f³ on the twist.
        let k1x = qx.conjugate * frob.f2
        let k1y = qy.conjugate * frob.f3
        let first = additionStep(&a, x2: k1x, y2: k1y)
        // K = −π²(Q).
        let k2x = k1x.conjugate * frob.f2
        let k2y = -(k1y.conjugate * frob.f3)
        return (first, lineThrough(a, x2: k2x, y2: k2y))
    }

    /// A line value a.a + a.b·t³ + b.a·t (the D-type sparse layout).
    struct Line {
        var l0: Fp2 // coefficient of t⁰
        var l3: Fp2 // coefficient of t³
        var l1: Fp2 // coefficient of t¹
    }

    /// A line before P is put in: its value at P = (xP, yP) is c0·yP + c1·xP·t + c3·t³. Only
    /// these depend on Q, so a fixed Q's lines can be computed once (`PreparedG2`).
    struct LineCoefficients: Sendable {
        var c0: Fp2
        var c3: Fp2
        var c1: Fp2

        @inline(__always)
        func at(_ px: Fp, _ py: Fp) -> Line { Line(l0: c0.scaled(by: py), l3: c3, l1: c1.scaled(by: px)) }
    }

    /// The tangent at A, then A ← 2A. With A = (X : Y : Z) the tangent y − λx − c, scaled by
    /// 2YZ and using Y²Z = X³ + b'Z³, is 2YZ·yP − 3X²·xP·t + (Y² − 3b'Z²)·t³.
    ///
    /// The doubling shares the line's squarings: with t = 3b'Z², 2A = (2XY(Y² − 3t) :
    /// (Y² + 3t)² − 12t² : 8Y²·YZ), the same coordinates as the complete doubling of
    /// `ProjectivePoint.doubled` (its Y3 = (Y² − 9b'Z²)(Y² + 3b'Z²) + 24b'Y²Z² expands to the
    /// same polynomial) for 4 multiplications and 5 squarings in all instead of 7 and 5.
    /// (Costello, Lange and Naehrig, "Faster pairing computations on curves with high-degree
    /// twists", PKC 2010, give this doubling with its line.)
    static func doublingStep(_ a: inout G2Point) -> LineCoefficients {
        let yz = a.y * a.z
        let x2 = a.x.squared
        let y2 = a.y.squared
        let t = BN254G2Curve.timesB3(a.z.squared)
        let line = LineCoefficients(c0: yz.doubled, c3: y2 - t, c1: -(x2.doubled + x2))
        let t3 = t.doubled + t
        let tt = t.squared
        let tt3 = tt.doubled + tt
        let x3 = (a.x * a.y * (y2 - t3)).doubled
        let y3 = (y2 + t3).squared - tt3.doubled.doubled
        let z3 = (y2 * yz).doubled.doubled.doubled
        a = G2Point(x: x3, y: y3, z: z3)
        return line
    }

    /// The line through A and the affine point B = (x2, y2), scaled by D = X − Z·x2:
    /// D·yP − N·xP·t + (N·x2 − D·y2)·t³ with N = Y − Z·y2. Then A ← A + B.
    ///
    /// The addition shares D and N with the line: with E = D³, G = X·D² and
    /// H = E + Z·N² − 2G, A + B = (D·H : N·(G − H) − Y·E : Z·E), the homogeneous mixed addition
    /// (Cohen, Miyaji and Ono's, Z2 = 1, all coordinates negated): 9 multiplications and 2
    /// squarings for the point and 2 more for the line, where the complete addition and a
    /// separate line took 16 multiplications. It is not complete: it needs A ≠ ±B, which holds
    /// in the Miller loop of a point of order r (A is a multiple [k]Q or [k]Q ± π(Q) with
    /// k < r, never ±B). The operations are the same whatever the points.
    static func additionStep(_ a: inout G2Point, x2: Fp2, y2: Fp2) -> LineCoefficients {
        let d = a.x - a.z * x2
        let n = a.y - a.z * y2
        let line = LineCoefficients(c0: d, c3: n * x2 - d * y2, c1: -n)
        let dd = d.squared
        let e = dd * d
        let g = a.x * dd
        let h = e + a.z * n.squared - g.doubled
        a = G2Point(x: d * h, y: n * (g - h) - a.y * e, z: a.z * e)
        return line
    }

    static func lineThrough(_ a: G2Point, x2: Fp2, y2: Fp2) -> LineCoefficients {
        let d = a.x - a.z * x2
        let n = a.y - a.z * y2
        return LineCoefficients(c0: d, c3: n * x2 - d * y2, c1: -n)
    }

    // MARK: Final exponentiation

    /// f^((p¹² − 1)/r) exactly as Milagro computes it: the easy part (p⁶ − 1)(p² + 1), then
    /// the Duquesne–Ghammam hard part (a fixed multiple of (p⁴ − p² + 1)/r, which is why
    /// other libraries' GT bytes differ while accept/reject answers agree).
    package static func finalExponentiation(_ f: Fp12) -> Fp12 {
        // Easy part.
        var r = f.conjugate * f.inverse
        r = r.frobenius(2) * r
        // Hard part. Every value is now in the cyclotomic subgroup, where conjugation inverts.
        var t0 = r.cyclotomicPowerU()
        var y3 = t0.cyclotomicSquared
        var y0 = t0 * y3
        var y2 = y3.frobenius * y3
        y2 = y2.cyclotomicSquared
        y2 = y2 * y3
        t0 = y0.cyclotomicPowerU()
        y0 = r.conjugate
        var y1 = t0.frobenius(2) * y0
        t0 = t0.conjugate
        y3 = t0.frobenius * t0
        t0 = t0.cyclotomicSquared
        y1 = y1 * t0
        t0 = y3.cyclotomicPowerU()
        t0 = t0.cyclotomicSquared
        t0 = t0.conjugate
        y3 = y3 * t0
        r = r.frobenius
        y0 = r
        r = r.frobenius
        y0 = y0 * r
        r = r.frobenius
        y0 = y0 * r
        r = y3.cyclotomicSquared * y2
        y3 = r * y0
        r = r * y1
        r = r.cyclotomicSquared
        r = r * y3
        return r
    }
}

extension Fp12 {
    /// self · line for a normalised line 1 + l1·t + l3·t³ (`PreparedG2.init(_:)`): as
    /// `multipliedBySparse` with l0 = 1, where a·ya and c·ya, ya = 1 + l3·s, are two Fp2
    /// products each instead of an Fp4 product: x·(1 + l3·s) = (x0 + ξ·x1·l3) + (x1 + x0·l3)·s.
    @inline(__always)
    func multipliedByNormalizedSparse(l3: Fp2, l1: Fp2) -> Fp12 {
        let aya = Fp4(a.a + (a.b * l3).timesXi, a.b + a.a * l3)
        let cya = Fp4(c.a + (c.b * l3).timesXi, c.b + c.a * l3)
        let byb = b.scaled(by: l1)
        let cyb = c.scaled(by: l1)
        let sum = (a + b) * Fp4(Fp2.one + l1, l3)
        return Fp12(aya + cyb.timesS, sum - aya - byb, byb + cya)
    }

    /// self · (l0 + l1·t + l3·t³), the product by a line in the Miller loop
    /// (`multipliedBySparse`). Public for the tests, which check it against a schoolbook product.
    package func multipliedBySparseLine(l0: Fp2, l1: Fp2, l3: Fp2) -> Fp12 {
        multipliedBySparse(Pairing.Line(l0: l0, l3: l3, l1: l1))
    }

    /// self · line for a D-type sparse line a.a + a.b·t³ + b.a·t (b.b = c = 0). With
    /// y = ya + yb·t, ya = l0 + l3·s ∈ Fp4 and yb = l1 ∈ Fp2 (t³ = s):
    ///   a′ = a·ya + s·(c·yb),  b′ = a·yb + b·ya,  c′ = b·yb + c·ya,
    /// and b′ by Karatsuba, (a + b)(ya + yb) − a·ya − b·yb: thirteen Fp2 multiplications
    /// (a·ya, c·ya, (a + b)(ya + yb) three each, b·yb and c·yb two) instead of fifteen.
    @inline(__always)
    func multipliedBySparse(_ l: Pairing.Line) -> Fp12 {
        let ya = Fp4(l.l0, l.l3)
        let aya = a * ya
        let cya = c * ya
        let byb = b.scaled(by: l.l1)
        let cyb = c.scaled(by: l.l1)
        let sum = (a + b) * Fp4(l.l0 + l.l1, l.l3)
        return Fp12(aya + cyb.timesS, sum - aya - byb, byb + cya)
    }

    /// Squaring for elements of the cyclotomic subgroup (norm 1 over Fp6, as every value is
    /// after the easy part of the final exponentiation). Granger and Scott, "Faster squaring
    /// in the cyclotomic subgroup of sixth degree extensions" (PKC 2010), §3.1, with z = t,
    /// τ = s and the conjugation of Fp4 over Fp2:
    ///   (a + bt + ct²)² = (3a² − 2ā) + (3s·c² + 2b̄)t + (3b² − 2c̄)t².
    var cyclotomicSquared: Fp12 {
        // 3x − 2ȳ = x + 2(x − ȳ) and 3x + 2ȳ = x + 2(x + ȳ), with x ± ȳ formed coefficient-wise.
        let a2 = a.squared, b2 = b.squared, c2 = c.squared.timesS
        let na = a2 + Fp4(a2.a - a.a, a2.b + a.b).doubled
        let nb = c2 + Fp4(c2.a + b.a, c2.b - b.b).doubled
        let nc = b2 + Fp4(b2.a - c.a, b2.b + c.b).doubled
        return Fp12(na, nb, nc)
    }
}
