/// Fp2 = Fp[i]/(i² + 1): elements a + b·i.
package struct Fp2: FieldArithmetic {
    package var a: Fp
    package var b: Fp

    @inlinable
    package init(_ a: Fp, _ b: Fp) { self.a = a; self.b = b }

    package static let zero = Fp2(.zero, .zero)
    package static let one = Fp2(.one, .zero)

    @inlinable @inline(__always)
    package static func + (x: Fp2, y: Fp2) -> Fp2 { Fp2(x.a + y.a, x.b + y.b) }
    @inlinable @inline(__always)
    package static func - (x: Fp2, y: Fp2) -> Fp2 { Fp2(x.a - y.a, x.b - y.b) }
    @inlinable @inline(__always)
    package static prefix func - (x: Fp2) -> Fp2 { Fp2(-x.a, -x.b) }

    /// Karatsuba with lazy reduction: three double-width products and two Montgomery
    /// reductions instead of three full multiplications. The real part aa − bb gets m·2^256
    /// added when negative (masked), so it is in [0, m·2^256); the imaginary part
    /// (a0 + a1)(b0 + b1) − aa − bb = a0·b1 + a1·b0 < 2m² < m·2^256 uses the unreduced sums
    /// (below 2m < 2^255). Both meet `montReduce`'s bound. Constant-time: no branch on values.
    /// (The technique is the lazy reduction of Aranha, Karabina, Longa, Gebotys and López,
    /// "Faster explicit formulas for computing pairings over ordinary curves", EUROCRYPT 2011.)
    @inlinable
    package static func * (x: Fp2, y: Fp2) -> Fp2 {
        let aa = Fp.mulWide(x.a.mont, y.a.mont)
        let bb = Fp.mulWide(x.b.mont, y.b.mont)
        let sx = x.a.mont.addingWithCarry(x.b.mont).0
        let sy = y.a.mont.addingWithCarry(y.b.mont).0
        let cc = Fp.mulWide(sx, sy)
        let (d, borrow) = aa.subtractingWithBorrow(bb)
        let re = d.addingHigh(UInt256.select(Mask.ofBit(borrow), BN254FieldModulus.modulus, .zero))
        let im = cc.subtractingWithBorrow(aa).0.subtractingWithBorrow(bb).0
        return Fp2(Fp(mont: Fp.montReduce(re)), Fp(mont: Fp.montReduce(im)))
    }

    /// (a+bi)² = (a+b)(a-b) + 2ab·i.
    @inlinable
    package var squared: Fp2 {
        let ab = a * b
        return Fp2((a + b) * (a - b), ab + ab)
    }

    @inlinable @inline(__always)
    package var doubled: Fp2 { Fp2(a.doubled, b.doubled) }

    /// Multiplies by an element of Fp.
    @inlinable
    package func scaled(by k: Fp) -> Fp2 { Fp2(a * k, b * k) }

    /// The conjugate a − b·i, which is also the Frobenius map x ↦ x^p.
    @inlinable @inline(__always)
    package var conjugate: Fp2 { Fp2(a, -b) }

    /// Multiplies by ξ = 1 + i, the non-residue defining the tower and the twist.
    @inlinable @inline(__always)
    package var timesXi: Fp2 { Fp2(a - b, a + b) }

    /// 1/(a+bi) = (a−bi)/(a²+b²); zero maps to zero. Constant-time.
    package var inverse: Fp2 {
        let norm = (a.squared + b.squared).inverse
        return Fp2(a * norm, -(b * norm))
    }

    @inlinable
    package var isZeroMask: UInt64 { a.isZeroMask & b.isZeroMask }

    /// All-ones when equal, else 0. Constant-time: every coefficient is compared.
    @inlinable
    package func equalMask(_ o: Fp2) -> UInt64 { a.equalMask(o.a) & b.equalMask(o.b) }

    /// Constant-time equality (all coefficients compared, see `FieldArithmetic`).
    @inlinable
    package static func == (x: Fp2, y: Fp2) -> Bool { x.equalMask(y) != 0 }

    @inlinable
    package static func select(_ mask: UInt64, _ x: Fp2, _ y: Fp2) -> Fp2 {
        Fp2(Fp.select(mask, x.a, y.a), Fp.select(mask, x.b, y.b))
    }

    /// The square root for public data (G2 decompression by x). Returns nil for non-squares.
    /// Uses the norm method for p ≡ 3 (mod 4): see e.g. Adj and Rodríguez-Henríquez,
    /// "Square root computation over even extension fields", algorithm 9.
    func squareRoot() -> Fp2? {
        if b.isZero {
            let (r, ok) = a.squareRoot()
            if ok { return Fp2(r, .zero) }
            // a is a non-square in Fp, so -a is a square and sqrt(a) = sqrt(-a)·i.
            let (r2, ok2) = (-a).squareRoot()
            return ok2 ? Fp2(.zero, r2) : nil
        }
        let (n, isSq) = (a.squared + b.squared).squareRoot()
        guard isSq else { return nil }
        let half = Fp(2).inverse
        var (x, ok) = ((a + n) * half).squareRoot()
        if !ok { (x, ok) = ((a - n) * half).squareRoot() }
        guard ok, !x.isZero else { return nil }
        let y = b * (x.doubled).inverse
        let root = Fp2(x, y)
        return root.squared == self ? root : nil
    }
}
