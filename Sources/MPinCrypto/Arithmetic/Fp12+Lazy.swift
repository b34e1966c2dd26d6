/// Lazy reduction across whole Fp12 products: every Fp2 product is kept double-width
/// (`Fp2WideProduct`), the products that make up one output coefficient are summed unreduced
/// (`Fp2Accumulator`), and each of the twelve Fp coefficients is reduced once, where the
/// products reduced per Fp4 or Fp2 piece cost 20 (sparse line product) or 24 (full product)
/// Montgomery reductions. The reductions are the serial part of the arithmetic (each round's
/// quotient waits for the previous round); the sums that replace them are carry chains with no
/// multiplication. (The lazy reduction of Aranha, Karabina, Longa, Gebotys and López, "Faster
/// explicit formulas for computing pairings over ordinary curves", EUROCRYPT 2011, carried to
/// the top of the tower, as `Fp4+Lazy.swift` does one level down.)
///
/// Bounds, with m the BN254CX prime (2^253 < m < 2^253.2, so 2^256 > 7.11·m and
/// 2^512 > 50·m²): every double-width product here is of two reduced values (< m), so
/// p1, p2 < m² and the exact cross term < 2m² (see `Fp2WideProduct`). An accumulator keeps a
/// coefficient as pos − neg, two sums of such pieces; each routine below counts, per output, how
/// many m² each side can reach (at most 9), far below the 2m·2^256 > 14.2·m² that
/// `reduceSigned` accepts, and below 2^512 > 50·m², so no sum leaves the eight limbs.
/// Constant-time: fixed operations, the only value-dependent choices are masked selections.

/// An Fp2 product u·v, u and v reduced, before any reduction: three nonnegative 512-bit
/// integers with u·v ≡ (p1 − p2) + cross·i, p1 = u0v0 < m², p2 = u1v1 < m², and the exact
/// cross = u0v1 + u1v0 < 2m² (Karatsuba: (u0 + u1)(v0 + v1) − p1 − p2, the sums unreduced,
/// below 2m < 2^256, so the subtraction never borrows).
@usableFromInline
struct Fp2WideProduct {
    @usableFromInline var p1: UInt512
    @usableFromInline var p2: UInt512
    @usableFromInline var cross: UInt512

    /// Not inlined: one copy of the three wide products keeps the callers' code small (a
    /// sparse product with its thirteen inlined was 42 KB, more than the 32 KB instruction
    /// cache, and slower than the reduced products for it).
    @usableFromInline @inline(never)
    init(_ u: Fp2, _ v: Fp2) { (p1, p2, cross) = Fp4.karatsubaParts(u, v) }
}

extension UInt512 {
    @inlinable @inline(__always)
    static var zero: UInt512 { UInt512(0, 0, 0, 0, 0, 0, 0, 0) }

    /// self − o, wrapping (callers keep the running value nonnegative). Branch-free.
    @inlinable @inline(__always)
    func subtracting(_ o: UInt512) -> UInt512 { subtractingWithBorrow(o).0 }

    @inlinable @inline(__always)
    static func + (x: UInt512, y: UInt512) -> UInt512 { x.adding(y) }

    @inlinable @inline(__always)
    static func - (x: UInt512, y: UInt512) -> UInt512 { x.subtracting(y) }
}

/// The final step of a lazy coefficient: t = pos + 2m·R − neg, written by the callers as one
/// chain (the positive pieces, then `plusTwiceMR`, then the negative pieces subtracted one by one),
/// which the compiler keeps in eight registers with the pieces read from memory; with
/// pos, neg < 2m·R every partial value lies in (0, 4m·R) (no wrap), as `reduceSigned` says.
@usableFromInline
enum LazyCoefficient {
    /// x + 2m·R.
    @inlinable @inline(__always)
    static func plusTwiceMR(_ x: UInt512) -> UInt512 {
        x.addingHigh(UInt256(0x7ccc47deb836ab66, 0x487faddc30127dc3, 0x617bbec8f4c6cda6, 0x4800000010e0541b))
    }

    /// t·R⁻¹ mod m for t < 4m·R: the high half (below 4m) less 2m and m where they fit, then
    /// `montReduce` (t now below m·R).
    @inlinable @inline(__always)
    static func reduce(_ t: UInt512) -> Fp {
        let m = BN254FieldModulus.modulus
        let twiceM = UInt256(0x7ccc47deb836ab66, 0x487faddc30127dc3, 0x617bbec8f4c6cda6, 0x4800000010e0541b)
        let high = UInt256(t.l4, t.l5, t.l6, t.l7).subtractingIfFits(twiceM).subtractingIfFits(m)
        return Fp(mont: Fp.montReduce(UInt512(t.l0, t.l1, t.l2, t.l3, high.w0, high.w1, high.w2, high.w3)))
    }

    /// Four coefficients reduced in one function, so that their independent serial chains
    /// interleave (one reduction at a time leaves the multiplier idle).
    @usableFromInline @inline(never)
    static func reduce4(_ t0: UInt512, _ t1: UInt512, _ t2: UInt512, _ t3: UInt512) -> Fp4 {
        Fp4(Fp2(reduce(t0), reduce(t1)), Fp2(reduce(t2), reduce(t3)))
    }
}

extension Fp12 {
    /// self · (l0 + l1·t + l3·t³), the product of the Miller loop's lines
    /// (`lazySparseProduct`). Public for the tests, which check it against a schoolbook product.
    public func multipliedBySparseLine(l0: Fp2, l1: Fp2, l3: Fp2) -> Fp12 {
        lazySparseProduct(l0: l0, l1: l1, l3: l3)
    }

    /// self · line for a D-type sparse line l0 + l1·t + l3·t³ with lazy reduction: the
    /// thirteen Fp2 products of a Karatsuba over Fp4, summed double-width into the twelve
    /// output coefficients, twelve reductions instead of twenty. With a = A0 + A1·s,
    /// b = B0 + B1·s, c = C0 + C1·s (t³ = s, s² = ξ) and the products
    ///   P0 = A0·l0, P1 = A1·l3, P2 = (A0 + A1)(l0 + l3),   (a·ya, ya = l0 + l3·s)
    ///   Q0 = C0·l0, Q1 = C1·l3, Q2 = (C0 + C1)(l0 + l3),   (c·ya)
    ///   R0 = B0·l1, R1 = B1·l1, S0 = C0·l1, S1 = C1·l1,     (b·l1, c·l1)
    ///   T0 = (A0 + B0)(l0 + l1), T1 = (A1 + B1)·l3,
    ///   T2 = (A0 + B0 + A1 + B1)(l0 + l1 + l3),              ((a + b)(ya + l1))
    /// (sums reduced, so every product is of reduced values):
    ///   a′ = (P0 + ξ(P1 + S1)) + (P2 − P0 − P1 + S0)·s
    ///   b′ = (T0 − P0 − R0 + ξ(T1 − P1)) + (T2 − T0 − T1 − P2 + P0 + P1 − R1)·s
    ///   c′ = (R0 + Q0 + ξQ1) + (R1 + Q2 − Q0 − Q1)·s
    /// Each Fp coefficient is one chain, positive pieces first (X = (p1 − p2) + cross·i,
    /// ξX = (p1 − p2 − cross) + (p1 − p2 + cross)·i). The comment above each chain gives its
    /// positive and negative totals in m² (p1, p2 < m², cross < 2m²): at most 8, below the 14
    /// of `LazyCoefficient`.
    @usableFromInline @inline(never)
    func lazySparseProduct(l0: Fp2, l1: Fp2, l3: Fp2) -> Fp12 {
        typealias L = LazyCoefficient
        let l03 = l0 + l3, l01 = l0 + l1
        let ab0 = a.a + b.a, ab1 = a.b + b.b
        let p0 = Fp2WideProduct(a.a, l0), p1 = Fp2WideProduct(a.b, l3)
        let p2 = Fp2WideProduct(a.a + a.b, l03)
        let q0 = Fp2WideProduct(c.a, l0), q1 = Fp2WideProduct(c.b, l3)
        let q2 = Fp2WideProduct(c.a + c.b, l03)
        let r0 = Fp2WideProduct(b.a, l1), r1 = Fp2WideProduct(b.b, l1)
        let s0 = Fp2WideProduct(c.a, l1), s1 = Fp2WideProduct(c.b, l1)
        let t0 = Fp2WideProduct(ab0, l01), t1 = Fp2WideProduct(ab1, l3)
        let t2 = Fp2WideProduct(ab0 + ab1, l01 + l3)

        // a′ = P0 + ξP1 + ξS1 | P2 − P0 − P1 + S0.   re 3 | 7, im 8 | 2; re 4 | 4, im 4 | 4.
        let aRe = L.plusTwiceMR(p0.p1 + p1.p1 + s1.p1) - p0.p2 - p1.p2 - p1.cross - s1.p2 - s1.cross
        let aIm = L.plusTwiceMR(p0.cross + p1.p1 + p1.cross + s1.p1 + s1.cross) - p1.p2 - s1.p2
        let aSRe = L.plusTwiceMR(p2.p1 + p0.p2 + p1.p2 + s0.p1) - p2.p2 - p0.p1 - p1.p1 - s0.p2
        let aSIm = L.plusTwiceMR(p2.cross + s0.cross) - p0.cross - p1.cross
        // b′ = T0 − P0 − R0 + ξT1 − ξP1 | T2 − T0 − T1 − P2 + P0 + P1 − R1.
        //   re 7 | 7, im 6 | 7; re 7 | 7, im 6 | 8.
        let bRe = L.plusTwiceMR(t0.p1 + p0.p2 + r0.p2 + t1.p1 + p1.p2 + p1.cross)
            - t0.p2 - p0.p1 - r0.p1 - t1.p2 - t1.cross - p1.p1
        let bIm = L.plusTwiceMR(t0.cross + t1.p1 + t1.cross + p1.p2)
            - p0.cross - r0.cross - t1.p2 - p1.p1 - p1.cross
        let bSRe = L.plusTwiceMR(t2.p1 + t0.p2 + t1.p2 + p2.p2 + p0.p1 + p1.p1 + r1.p2)
            - t2.p2 - t0.p1 - t1.p1 - p2.p1 - p0.p2 - p1.p2 - r1.p1
        let bSIm = L.plusTwiceMR(t2.cross + p0.cross + p1.cross) - t0.cross - t1.cross - p2.cross - r1.cross
        // c′ = R0 + Q0 + ξQ1 | R1 + Q2 − Q0 − Q1.   re 3 | 5, im 7 | 1; re 4 | 4, im 4 | 4.
        let cRe = L.plusTwiceMR(r0.p1 + q0.p1 + q1.p1) - r0.p2 - q0.p2 - q1.p2 - q1.cross
        let cIm = L.plusTwiceMR(r0.cross + q0.cross + q1.p1 + q1.cross) - q1.p2
        let cSRe = L.plusTwiceMR(r1.p1 + q2.p1 + q0.p2 + q1.p2) - r1.p2 - q2.p2 - q0.p1 - q1.p1
        let cSIm = L.plusTwiceMR(r1.cross + q2.cross) - q0.cross - q1.cross
        return Fp12(L.reduce4(aRe, aIm, aSRe, aSIm), L.reduce4(bRe, bIm, bSRe, bSIm), L.reduce4(cRe, cIm, cSRe, cSIm))
    }
}

