/// Fp4 multiplication with lazy reduction: the nine double-width Fp products of Karatsuba over
/// Karatsuba are combined into the four output coefficients before any reduction, so a product
/// costs four Montgomery reductions instead of six (three Fp2 products of two each).
///
/// With x = (a0 + a1·i) + (b0 + b1·i)·s, y likewise with c, d, and ξ = 1 + i:
///   aa = xa·ya: re = A1 − A2, im = A3 − A1 − A2 (A1 = a0c0, A2 = a1c1, A3 = (a0+a1)(c0+c1));
///   bb and cross = (xa + xb)(ya + yb) the same way (B, C);
///   result = (aa + ξ·bb) + (cross − aa − bb)·s, ξ·(r + q·i) = (r − q) + (r + q)·i.
/// Each coefficient is written as P − N with P and N sums of products of values below m (the
/// Karatsuba sums a0 + a1 below 2m), so P, N < 5m² < m·2^256 (m < 2^254, so 2^256 > 7m). P − N
/// gets m·2^256 added when negative (a masked selection on the borrow), which lands it in
/// [0, m·2^256), the bound of `montReduce`. Constant-time: no branch on values.
/// (The lazy reduction of Aranha, Karabina, Longa, Gebotys and López, "Faster explicit formulas
/// for computing pairings over ordinary curves", EUROCRYPT 2011, one tower level up.)
extension Fp4 {
    @inlinable
    package static func * (x: Fp4, y: Fp4) -> Fp4 { lazyProduct(x, y) }

    @usableFromInline @inline(never)
    static func lazyProduct(_ x: Fp4, _ y: Fp4) -> Fp4 {
        let sx = x.a + x.b, sy = y.a + y.b
        // Exact values: aaIm = a0c1 + a1c0 < 2m², and so on.
        let (a1, a2, aaIm) = karatsubaParts(x.a, y.a)
        let (b1, b2, bbIm) = karatsubaParts(x.b, y.b)
        let (c1, c2, crIm) = karatsubaParts(sx, sy)
        // c0.re = aa.re + bb.re − bb.im = (A1 + B1) − (A2 + B2 + bbIm)
        let r0 = reduceDifference(a1.adding(b1), a2.adding(b2).adding(bbIm))
        // c0.im = aa.im + bb.re + bb.im = (aaIm + B1 + bbIm) − B2
        let i0 = reduceDifference(aaIm.adding(b1).adding(bbIm), b2)
        // c1.re = cross.re − aa.re − bb.re = (C1 + A2 + B2) − (C2 + A1 + B1)
        let r1 = reduceDifference(c1.adding(a2).adding(b2), c2.adding(a1).adding(b1))
        // c1.im = cross.im − aa.im − bb.im
        let i1 = reduceDifference(crIm, aaIm.adding(bbIm))
        return Fp4(Fp2(r0, i0), Fp2(r1, i1))
    }

    /// The three double-width pieces of an Fp2 product u·v: u0v0, u1v1 and the exact cross
    /// term u0v1 + u1v0 = (u0 + u1)(v0 + v1) − u0v0 − u1v1 (the sums unreduced, below 2m).
    @inlinable @inline(__always)
    static func karatsubaParts(_ u: Fp2, _ v: Fp2) -> (UInt512, UInt512, UInt512) {
        let p1 = Fp.mulWide(u.a.mont, v.a.mont)
        let p2 = Fp.mulWide(u.b.mont, v.b.mont)
        let su = u.a.mont.addingWithCarry(u.b.mont).0
        let sv = v.a.mont.addingWithCarry(v.b.mont).0
        let p3 = Fp.mulWide(su, sv)
        return (p1, p2, p3.subtractingWithBorrow(p1).0.subtractingWithBorrow(p2).0)
    }

    /// (p − n)·R⁻¹ mod m for p, n < m·2^256: m·2^256 is added when p < n.
    @inlinable @inline(__always)
    static func reduceDifference(_ p: UInt512, _ n: UInt512) -> Fp {
        let (d, borrow) = p.subtractingWithBorrow(n)
        let t = d.addingHigh(UInt256.select(Mask.ofBit(borrow), BN254FieldModulus.modulus, .zero))
        return Fp(mont: Fp.montReduce(t))
    }
}
