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

/// One Fp2 coefficient of a lazy product, as re = rePos − reNeg and im = imPos − imNeg, each
/// side a plain sum of nonnegative double-width pieces. Adding a product adds at most m² to
/// either real side and 2m² to an imaginary side; adding ξ times a product (ξ = 1 + i,
/// ξ(r + qi) = (r − q) + (r + q)i with r = p1 − p2, q = cross) adds at most 3m² to any side.
@usableFromInline
struct Fp2Accumulator {
    @usableFromInline var rePos = UInt512.zero
    @usableFromInline var reNeg = UInt512.zero
    @usableFromInline var imPos = UInt512.zero
    @usableFromInline var imNeg = UInt512.zero

    @inlinable @inline(__always)
    init() {}

    /// The accumulator holding x alone.
    @inlinable @inline(__always)
    init(_ x: Fp2WideProduct) { rePos = x.p1; reNeg = x.p2; imPos = x.cross }

    /// The accumulator holding ξ·x alone.
    @inlinable @inline(__always)
    init(timesXi x: Fp2WideProduct) {
        rePos = x.p1; reNeg = x.p2.adding(x.cross)
        imPos = x.p1.adding(x.cross); imNeg = x.p2
    }

    /// += x: at most m² on each real side, 2m² on imPos.
    @inlinable @inline(__always)
    mutating func add(_ x: Fp2WideProduct) {
        rePos = rePos.adding(x.p1); reNeg = reNeg.adding(x.p2); imPos = imPos.adding(x.cross)
    }

    /// −= x: at most m² on each real side, 2m² on imNeg.
    @inlinable @inline(__always)
    mutating func subtract(_ x: Fp2WideProduct) {
        rePos = rePos.adding(x.p2); reNeg = reNeg.adding(x.p1); imNeg = imNeg.adding(x.cross)
    }

    /// += ξ·x: m² on rePos and imNeg, 3m² on reNeg and imPos.
    @inlinable @inline(__always)
    mutating func addTimesXi(_ x: Fp2WideProduct) {
        rePos = rePos.adding(x.p1); reNeg = reNeg.adding(x.p2).adding(x.cross)
        imPos = imPos.adding(x.p1).adding(x.cross); imNeg = imNeg.adding(x.p2)
    }

    /// −= ξ·x: 3m² on rePos and imNeg, m² on reNeg and imPos.
    @inlinable @inline(__always)
    mutating func subtractTimesXi(_ x: Fp2WideProduct) {
        rePos = rePos.adding(x.p2).adding(x.cross); reNeg = reNeg.adding(x.p1)
        imPos = imPos.adding(x.p2); imNeg = imNeg.adding(x.p1).adding(x.cross)
    }

    /// The reduced coefficient: two Montgomery reductions. Every side must be below 2m·2^256.
    @inlinable @inline(__always)
    var reduced: Fp2 {
        Fp2(Fp(mont: Fp2Accumulator.reduceSigned(rePos, reNeg)),
            Fp(mont: Fp2Accumulator.reduceSigned(imPos, imNeg)))
    }

    /// The Fp4 element x + y·s, reduced: four Montgomery reductions in one function, so that
    /// the compiler interleaves their independent serial chains (one reduction at a time left
    /// the multiplier idle: a sparse product 25 % slower than with the four interleaved).
    @usableFromInline @inline(never)
    static func reduced(_ x: Fp2Accumulator, _ y: Fp2Accumulator) -> Fp4 { Fp4(x.reduced, y.reduced) }

    /// (pos − neg)·R⁻¹ mod m for pos, neg < 2m·R (R = 2^256). t = pos + 2m·R − neg lies in
    /// (0, 4m·R) (4m·R < 2^512: m < 2^254); its high half is then below 4m, and subtracting 2m
    /// and m where they fit leaves it below m, so t stays ≡ pos − neg (mod m) and falls below
    /// m·R, `montReduce`'s bound. Branch-free.
    @inlinable @inline(__always)
    static func reduceSigned(_ pos: UInt512, _ neg: UInt512) -> UInt256 {
        let m = BN254FieldModulus.modulus
        let twiceM = UInt256(0x7ccc47deb836ab66, 0x487faddc30127dc3, 0x617bbec8f4c6cda6, 0x4800000010e0541b)
        let t = pos.addingHigh(twiceM).subtractingWithBorrow(neg).0
        let high = UInt256(t.l4, t.l5, t.l6, t.l7).subtractingIfFits(twiceM).subtractingIfFits(m)
        return Fp.montReduce(UInt512(t.l0, t.l1, t.l2, t.l3, high.w0, high.w1, high.w2, high.w3))
    }
}

extension UInt512 {
    @inlinable @inline(__always)
    static var zero: UInt512 { UInt512(0, 0, 0, 0, 0, 0, 0, 0) }
}

extension Fp12 {
    /// self · (l0 + l1·t + l3·t³), the product of the Miller loop's lines
    /// (`lazySparseProduct`). Public for the tests, which check it against the full product.
    public func multipliedBySparseLine(l0: Fp2, l1: Fp2, l3: Fp2) -> Fp12 {
        lazySparseProduct(l0: l0, l1: l1, l3: l3)
    }

    /// self · line for a D-type sparse line l0 + l1·t + l3·t³ with lazy reduction: the
    /// thirteen Fp2 products of `multipliedBySparse`'s Karatsuba, summed double-width into the
    /// six output coefficients, twelve reductions instead of twenty. With a = A0 + A1·s,
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
    /// Largest sides (in m², from `Fp2Accumulator`'s per-term amounts): a′.a imPos 8, b′.a 7,
    /// b′.b imNeg 8, c′.a imPos 7; the bound is 14.
    @usableFromInline @inline(never)
    func lazySparseProduct(l0: Fp2, l1: Fp2, l3: Fp2) -> Fp12 {
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

        // a′.a: rePos 3, reNeg 7, imPos 8, imNeg 2.
        var aa = Fp2Accumulator(p0)
        aa.addTimesXi(p1); aa.addTimesXi(s1)
        // a′.b: 4 on every side.
        var ab = Fp2Accumulator(p2)
        ab.subtract(p0); ab.subtract(p1); ab.add(s0)
        // b′.a: rePos 7, reNeg 7, imPos 6, imNeg 7.
        var ba = Fp2Accumulator(t0)
        ba.subtract(p0); ba.subtract(r0); ba.addTimesXi(t1); ba.subtractTimesXi(p1)
        // b′.b: 7 on each real side, imPos 6, imNeg 8.
        var bb = Fp2Accumulator(t2)
        bb.subtract(t0); bb.subtract(t1); bb.subtract(p2); bb.add(p0); bb.add(p1); bb.subtract(r1)
        // c′.a: rePos 3, reNeg 5, imPos 7, imNeg 1.
        var ca = Fp2Accumulator(r0)
        ca.add(q0); ca.addTimesXi(q1)
        // c′.b: 4 on every side.
        var cb = Fp2Accumulator(r1)
        cb.add(q2); cb.subtract(q0); cb.subtract(q1)
        return Fp12(Fp2Accumulator.reduced(aa, ab), Fp2Accumulator.reduced(ba, bb), Fp2Accumulator.reduced(ca, cb))
    }
}

