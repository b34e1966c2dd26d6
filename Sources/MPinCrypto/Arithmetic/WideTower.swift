/// Unreduced ("wide") Fp2 and Fp4 values, so that Fp12 products can add and subtract their
/// Fp2 products at double width and reduce each of the twelve output coefficients once
/// (lazy reduction; Aranha, Karabina, Longa, Gebotys and López, "Faster explicit formulas for
/// computing pairings over ordinary curves", EUROCRYPT 2011, §3). An Fp12 multiplication has
/// 18 Fp2 products, and reducing each cost 36 Montgomery reductions; now it costs 12.
///
/// Every Fp coefficient is a 512-bit integer kept in [0, m·R), R = 2^256, the range
/// `Fp.montReduce` accepts. Sums and differences are taken modulo m·R, which Montgomery
/// reduction does not see: (t + m·R)·R⁻¹ = t·R⁻¹ + m ≡ t·R⁻¹ (mod m). Adding or subtracting m·R
/// touches only the high 256 bits, and is done by mask, so all of it is constant-time.

extension UInt512 {
    /// (self + o) mod m·R for self, o in [0, m·R): the sum is below 2m·R < 2^511, so it fits,
    /// and m·R is subtracted from it (its high half) when that does not borrow.
    @inlinable @inline(__always)
    func addingModMR(_ o: UInt512) -> UInt512 {
        let (s0, c0) = addCarry(l0, o.l0, 0)
        let (s1, c1) = addCarry(l1, o.l1, c0)
        let (s2, c2) = addCarry(l2, o.l2, c1)
        let (s3, c3) = addCarry(l3, o.l3, c2)
        let high = UInt256(l4, l5, l6, l7).addingWithCarry(UInt256(o.l4, o.l5, o.l6, o.l7)).0
            .addingWithCarry(UInt256(c3)).0
        let (reduced, borrow) = high.subtractingWithBorrow(BN254FieldModulus.modulus)
        let h = UInt256.select(0 &- borrow, high, reduced)
        return UInt512(s0, s1, s2, s3, h.w0, h.w1, h.w2, h.w3)
    }

    /// (self − o) mod m·R for self, o in [0, m·R): m·R is added back when the difference
    /// borrows.
    @inlinable @inline(__always)
    func subtractingModMR(_ o: UInt512) -> UInt512 {
        let (d, borrow) = subtractingWithBorrow(o)
        return d.addingHigh(UInt256.select(0 &- borrow, BN254FieldModulus.modulus, .zero))
    }
}

/// An Fp2 value as two unreduced coefficients in [0, m·R).
@usableFromInline
struct Fp2Wide: Sendable {
    @usableFromInline var a: UInt512
    @usableFromInline var b: UInt512

    @inlinable @inline(__always)
    init(_ a: UInt512, _ b: UInt512) { self.a = a; self.b = b }

    @inlinable @inline(__always)
    static func + (x: Fp2Wide, y: Fp2Wide) -> Fp2Wide { Fp2Wide(x.a.addingModMR(y.a), x.b.addingModMR(y.b)) }

    @inlinable @inline(__always)
    static func - (x: Fp2Wide, y: Fp2Wide) -> Fp2Wide {
        Fp2Wide(x.a.subtractingModMR(y.a), x.b.subtractingModMR(y.b))
    }

    /// ·ξ = ·(1 + i): (a − b) + (a + b)i.
    @inlinable @inline(__always)
    var timesXi: Fp2Wide { Fp2Wide(a.subtractingModMR(b), a.addingModMR(b)) }

    /// The Fp2 value: one Montgomery reduction per coefficient.
    @inlinable @inline(__always)
    var reduced: Fp2 { Fp2(Fp(mont: Fp.montReduce(a)), Fp(mont: Fp.montReduce(b))) }
}

extension Fp2 {
    /// x·y unreduced: Karatsuba's three double-width products. The real part a0·b0 − a1·b1
    /// gets m·R added when negative, so it is in [0, m·R); the imaginary part
    /// (a0 + a1)(b0 + b1) − a0·b0 − a1·b1 = a0·b1 + a1·b0 < 2m² < m·R. Inputs must be reduced
    /// (the sums a0 + a1 < 2m make the middle product below 4m² < m·R).
    @inlinable @inline(__always)
    static func mulWide(_ x: Fp2, _ y: Fp2) -> Fp2Wide {
        let aa = Fp.mulWide(x.a.mont, y.a.mont)
        let bb = Fp.mulWide(x.b.mont, y.b.mont)
        let sx = x.a.mont.addingWithCarry(x.b.mont).0
        let sy = y.a.mont.addingWithCarry(y.b.mont).0
        let cc = Fp.mulWide(sx, sy)
        let re = aa.subtractingModMR(bb)
        let im = cc.subtractingWithBorrow(aa).0.subtractingWithBorrow(bb).0
        return Fp2Wide(re, im)
    }
}

/// An Fp4 value with unreduced Fp2 coefficients.
@usableFromInline
struct Fp4Wide: Sendable {
    @usableFromInline var a: Fp2Wide
    @usableFromInline var b: Fp2Wide

    @inlinable @inline(__always)
    init(_ a: Fp2Wide, _ b: Fp2Wide) { self.a = a; self.b = b }

    @inlinable @inline(__always)
    static func + (x: Fp4Wide, y: Fp4Wide) -> Fp4Wide { Fp4Wide(x.a + y.a, x.b + y.b) }

    @inlinable @inline(__always)
    static func - (x: Fp4Wide, y: Fp4Wide) -> Fp4Wide { Fp4Wide(x.a - y.a, x.b - y.b) }

    /// ·s, with s² = ξ: (a + bs)·s = ξb + a·s.
    @inlinable @inline(__always)
    var timesS: Fp4Wide { Fp4Wide(b.timesXi, a) }

    @inlinable @inline(__always)
    var reduced: Fp4 { Fp4(a.reduced, b.reduced) }
}

extension Fp4 {
    /// x·y unreduced: Karatsuba over Fp2 (as `*`), nine double-width products, no reduction.
    @inlinable @inline(__always)
    static func mulWide(_ x: Fp4, _ y: Fp4) -> Fp4Wide {
        let aa = Fp2.mulWide(x.a, y.a)
        let bb = Fp2.mulWide(x.b, y.b)
        let cross = Fp2.mulWide(x.a + x.b, y.a + y.b)
        return Fp4Wide(aa + bb.timesXi, cross - aa - bb)
    }

    /// The square unreduced: a² + ξb² as (a + b)(a + ξb) − ab − ξab, and 2ab (as `squared`).
    @inlinable @inline(__always)
    var squaredWide: Fp4Wide {
        let ab = Fp2.mulWide(a, b)
        let t = Fp2.mulWide(a + b, a + b.timesXi)
        return Fp4Wide(t - ab - ab.timesXi, ab + ab)
    }

    /// self·k for k in Fp2, unreduced.
    @inlinable @inline(__always)
    func scaledWide(by k: Fp2) -> Fp4Wide { Fp4Wide(Fp2.mulWide(a, k), Fp2.mulWide(b, k)) }
}
