/// The constants of a prime modulus below 2^255 for Montgomery arithmetic with R = 2^256.
package protocol MontgomeryModulus: Sendable {
    /// The prime m, below 2^255 (so sums of two reduced values never overflow 256 bits).
    static var modulus: UInt256 { get }
    /// -m^-1 mod 2^64.
    static var negInverse: UInt64 { get }
    /// R mod m (the Montgomery form of 1).
    static var rModM: UInt256 { get }
    /// R^2 mod m (converts into Montgomery form).
    static var r2ModM: UInt256 { get }
}

/// An element of the prime field Z/mZ kept in Montgomery form, `value = x·R mod m`.
///
/// Arithmetic is constant-time: every operation runs the same instructions whatever the
/// values. Inversion is by Fermat's little theorem (a fixed exponent). Equality is constant-time
/// too: the Montgomery form is always fully reduced, so equal elements have equal limbs, and
/// `==` compares all of them (`UInt256.equalMask`) instead of stopping at the first difference.
package struct PrimeFieldElement<M: MontgomeryModulus>: Sendable {
    /// Montgomery representation, always fully reduced (< m).
    @usableFromInline var mont: UInt256

    @inlinable init(mont: UInt256) { self.mont = mont }

    package static var zero: Self { Self(mont: .zero) }
    package static var one: Self { Self(mont: M.rModM) }

    /// The element equal to `value mod m`. `value` may be any 256-bit integer.
    @inlinable
    package init(_ value: UInt256) {
        // Both moduli lie in [2^253, 2^254), so value < 2^256 < 8m: subtracting 4m, 2m and m
        // where they fit leaves value mod m, then montMul(v, R^2) = v·R mod m.
        var v = value
        let m1 = M.modulus
        let m2 = m1.addingWithCarry(m1).0
        let m4 = m2.addingWithCarry(m2).0
        @inline(__always) func subtractIfFits(_ k: UInt256) {
            let (d, borrow) = v.subtractingWithBorrow(k)
            v = UInt256.select(Mask.ofBit(borrow), v, d)
        }
        subtractIfFits(m4); subtractIfFits(m2); subtractIfFits(m1)
        self.init(mont: Self.montMul(v, M.r2ModM))
    }

    @inlinable
    package init(_ small: UInt64) { self.init(UInt256(small)) }

    /// Reads 32 big-endian bytes and requires the value to be canonical (< m).
    package init?(canonicalBytes bytes: some Collection<UInt8>) {
        guard let v = UInt256(bigEndian: bytes), v.lessThanMask(M.modulus) != 0 else { return nil }
        self.init(v)
    }

    /// The canonical integer in [0, m).
    @inlinable
    package var value: UInt256 { Self.montMul(mont, UInt256(1)) }

    /// 32 big-endian bytes of the canonical integer.
    package var bytes: [UInt8] { value.bigEndianBytes }

    @inlinable package var isZero: Bool { mont.isZero }
    @inlinable package var isZeroMask: UInt64 { mont.isZeroMask }

    /// All-ones when equal, else 0. Constant-time.
    @inlinable @inline(__always)
    package func equalMask(_ o: Self) -> UInt64 { mont.equalMask(o.mont) }

    /// Constant-time equality.
    @inlinable
    package static func == (a: Self, b: Self) -> Bool { a.equalMask(b) != 0 }

    // MARK: Montgomery multiplication

    /// a·b·R^-1 mod m for a, b < m, by CIOS with 64x64->128-bit products.
    ///
    /// Each of the four rounds forms the 5-limb rows a·b_i and m·q as single carry chains and
    /// adds them to the running sum with one more chain each, which the compiler turns into
    /// straight `adc` sequences (two carries per product, as a multiply-accumulate per limb
    /// would need, cost a `setb` and an extra add each). The running sum stays below 2m < 2^255
    /// because the top limb of m is below 2^62, so it fits four limbs between rounds and five
    /// within one (the bound of gnark-crypto's note on CIOS for moduli with a spare top bit).
    @inlinable @inline(__always)
    static func montMul(_ a: UInt256, _ b: UInt256) -> UInt256 {
        let m = M.modulus
        let inv = M.negInverse
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0

        @inline(__always) func round(_ bi: UInt64) {
            // u = t + a·bi (five limbs)
            let (u0, u1, u2, u3, u4) = addRow(t0, t1, t2, t3, row(a, bi))
            // v = u + m·q, q chosen so that the low limb cancels; T = v / 2^64.
            let q = u0 &* inv
            let (_, v1, v2, v3, v4) = addRow5(u0, u1, u2, u3, u4, row(m, q))
            t0 = v1; t1 = v2; t2 = v3; t3 = v4
        }
        round(b.w0); round(b.w1); round(b.w2); round(b.w3)
        return reduceOnce(UInt256(t0, t1, t2, t3))
    }

    /// x·k as five limbs, one carry chain.
    @inlinable @inline(__always)
    static func row(_ x: UInt256, _ k: UInt64) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
        let (h0, l0) = x.w0.multipliedFullWidth(by: k)
        let (h1, l1) = x.w1.multipliedFullWidth(by: k)
        let (h2, l2) = x.w2.multipliedFullWidth(by: k)
        let (h3, l3) = x.w3.multipliedFullWidth(by: k)
        let (r1, c1) = addCarry(l1, h0, 0)
        let (r2, c2) = addCarry(l2, h1, c1)
        let (r3, c3) = addCarry(l3, h2, c2)
        // h3 ≤ 2^64 − 2, so this cannot overflow.
        return (l0, r1, r2, r3, h3 &+ c3)
    }

    /// (t0..t3) + r, five limbs; the sum stays below 2^320 (see `montMul`).
    @inlinable @inline(__always)
    static func addRow(_ t0: UInt64, _ t1: UInt64, _ t2: UInt64, _ t3: UInt64,
                       _ r: (UInt64, UInt64, UInt64, UInt64, UInt64)) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
        let (s0, c0) = addCarry(t0, r.0, 0)
        let (s1, c1) = addCarry(t1, r.1, c0)
        let (s2, c2) = addCarry(t2, r.2, c1)
        let (s3, c3) = addCarry(t3, r.3, c2)
        return (s0, s1, s2, s3, r.4 &+ c3)
    }

    /// (u0..u4) + r, five limbs; no carry out (see `montMul`).
    @inlinable @inline(__always)
    static func addRow5(_ u0: UInt64, _ u1: UInt64, _ u2: UInt64, _ u3: UInt64, _ u4: UInt64,
                        _ r: (UInt64, UInt64, UInt64, UInt64, UInt64)) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
        let (s0, c0) = addCarry(u0, r.0, 0)
        let (s1, c1) = addCarry(u1, r.1, c0)
        let (s2, c2) = addCarry(u2, r.2, c1)
        let (s3, c3) = addCarry(u3, r.3, c2)
        return (s0, s1, s2, s3, u4 &+ r.4 &+ c3)
    }

    /// v - m if v >= m, else v. v < 2m. Constant-time.
    @inlinable @inline(__always)
    static func reduceOnce(_ v: UInt256) -> UInt256 { v.subtractingIfFits(M.modulus) }

    // MARK: Ring operations

    @inlinable @inline(__always)
    package static func + (a: Self, b: Self) -> Self {
        // a + b < 2m < 2^256 because m < 2^255.
        let (s, _) = a.mont.addingWithCarry(b.mont)
        return Self(mont: reduceOnce(s))
    }

    @inlinable @inline(__always)
    package static func - (a: Self, b: Self) -> Self {
        let (d, borrow) = a.mont.subtractingWithBorrow(b.mont)
        let (fixed, _) = d.addingWithCarry(UInt256.select(Mask.ofBit(borrow), M.modulus, .zero))
        return Self(mont: fixed)
    }

    @inlinable @inline(__always)
    package static prefix func - (a: Self) -> Self { zero - a }

    @inlinable @inline(__always)
    package static func * (a: Self, b: Self) -> Self { Self(mont: montMul(a.mont, b.mont)) }

    /// The square, from the double-width square (ten products instead of sixteen) and one
    /// Montgomery reduction.
    @inlinable @inline(__always)
    package var squared: Self { Self(mont: Self.montMul(mont, mont)) }
    @inlinable @inline(__always)
    package var doubled: Self { self + self }

    /// self^e for a public or secret exponent; the sequence of operations depends only on the
    /// bit length of the modulus, never on e (square-and-multiply-always with selection).
    package func power(_ e: UInt256) -> Self {
        var result = Self.one
        for i in stride(from: 255, through: 0, by: -1) {
            result = result.squared
            let product = result * self
            result = Self.select(Mask.ofBit(e.bit(i)), product, result)
        }
        return result
    }

    /// self^e for a public exponent, by left-to-right sliding windows of up to five bits over
    /// the odd powers self, self³, ..., self³¹. Which squarings and table entries are used
    /// depends on e only, so this is constant-time in `self` (fixed exponents on secrets:
    /// inversion, square roots). About 250 squarings and 45 multiplications for a 254-bit e,
    /// where one bit at a time needed about 125 multiplications.
    package func power(publicExponent e: UInt256) -> Self {
        let n = e.bitLength
        if n == 0 { return .one }
        var odd = FixedTable16<Self>(repeating: self)
        let sq = self.squared
        for k in 1..<16 { odd[k] = odd[k - 1] * sq } // odd[k] = self^(2k+1)
        var result = Self.one
        var started = false
        var i = n - 1
        while i >= 0 {
            if e.bit(i) == 0 {
                if started { result = result.squared }
                i -= 1
                continue
            }
            // The window e[j...i] with the lowest set bit j ≥ i − 4.
            var j = max(i - 4, 0)
            while e.bit(j) == 0 { j += 1 }
            var digit = 0
            for k in stride(from: i, through: j, by: -1) { digit = digit << 1 | Int(e.bit(k)) }
            if started {
                for _ in j...i { result = result.squared }
                result = result * odd[digit >> 1]
            } else {
                result = odd[digit >> 1]
                started = true
            }
            i = j - 1
        }
        return result
    }

    /// self^-1, or 0 for 0. Constant-time in self: Bernstein and Yang's safegcd (`SafeGCD`, a
    /// fixed 744 division steps), about three times faster than Fermat's self^(m−2). It inverts
    /// the Montgomery form x·R, giving x⁻¹·R⁻¹; one Montgomery multiplication by R³ makes
    /// that x⁻¹·R, the Montgomery form of x⁻¹.
    package var inverse: Self {
        let inverted = SafeGCD.inverse(mont, modulus: M.modulus, negInverse: M.negInverse)
        let r3 = Self.montMul(M.r2ModM, M.r2ModM) // R²·R²·R⁻¹ = R³ mod m
        return Self(mont: Self.montMul(inverted, r3))
    }

    /// self^-1 by Fermat's little theorem, self^(m−2) (a fixed exponent, so constant-time
    /// too): the reference the tests check `inverse` against.
    package var fermatInverse: Self {
        let (e, _) = M.modulus.subtractingWithBorrow(UInt256(2))
        return power(publicExponent: e)
    }

    /// `mask` all-ones selects `a`, zero selects `b`.
    @inlinable @inline(__always)
    package static func select(_ mask: UInt64, _ a: Self, _ b: Self) -> Self {
        Self(mont: UInt256.select(mask, a.mont, b.mont))
    }

    /// Whether the canonical value is odd, as 0 or 1.
    @inlinable
    package var parity: UInt64 { value.w0 & 1 }
}

/// BN254CX base field modulus p.
package enum BN254FieldModulus: MontgomeryModulus {
    package static let modulus = UInt256(0xbe6623ef5c1b55b3, 0x243fd6ee18093ee1, 0xb0bddf647a6366d3, 0x2400000008702a0d)
    package static let negInverse: UInt64 = 0xef4e205bf9789e85
    package static let rModM = UInt256(0xcb3504747b40a81b, 0x02411f7d57bf47d3, 0x2acee440a748303a, 0x03ffffffc4eed9a0)
    package static let r2ModM = UInt256(0x1ab56897efb9b4e3, 0xa691c0713a431a9c, 0xb09d24432010d99d, 0x0984f9877b265a33)
}

/// BN254CX group order r (the scalar field).
package enum BN254ScalarModulus: MontgomeryModulus {
    package static let modulus = UInt256(0xbe11c0a636eb1f6d, 0xc43fd6ee0cc906ce, 0xb0bddf647a6366d2, 0x2400000008702a0d)
    package static let negInverse: UInt64 = 0x77a1aafa9a633d9b
    package static let rModM = UInt256(0xcd83bb747f922405, 0xa2411f7da680d058, 0x2acee440a748303c, 0x03ffffffc4eed9a0)
    package static let r2ModM = UInt256(0x7c882d12fb96bfae, 0xa28f033a656fa449, 0xfac7856946c17599, 0x104e0b77e15d4cd6)
}

/// The base field Fp of BN254CX.
package typealias Fp = PrimeFieldElement<BN254FieldModulus>
/// The scalar field Fr of BN254CX (integers modulo the group order r).
package typealias Fr = PrimeFieldElement<BN254ScalarModulus>

extension PrimeFieldElement where M == BN254FieldModulus {
    /// A square root for p ≡ 3 (mod 4): self^((p+1)/4), and whether it is one.
    /// Used on public data only (hash to curve, point decompression).
    /// A non-square is recognised by its Legendre symbol (a binary Jacobi-symbol computation,
    /// much cheaper than the exponentiation), so hashing to the curve pays for one exponentiation
    /// instead of one per candidate x. Variable-time, like every use of this function.
    func squareRoot() -> (root: Fp, isSquare: Bool) {
        if legendreSymbol == -1 { return (.zero, false) }
        let (pPlus1, _) = M.modulus.addingWithCarry(UInt256(1))
        let root = power(publicExponent: pPlus1.shiftedRight1.shiftedRight1)
        return (root, root.squared == self)
    }
}

// MARK: Double-width products (lazy reduction)

/// A 512-bit value as eight little-endian limbs: an unreduced product of two field elements,
/// so that sums and differences of products can be reduced once (lazy reduction).
package struct UInt512: Sendable {
    @usableFromInline var l0, l1, l2, l3, l4, l5, l6, l7: UInt64

    @inlinable @inline(__always)
    init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64,
         _ l4: UInt64, _ l5: UInt64, _ l6: UInt64, _ l7: UInt64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3
        self.l4 = l4; self.l5 = l5; self.l6 = l6; self.l7 = l7
    }

    /// self − o and the borrow out (0 or 1). Branch-free.
    @inlinable @inline(__always)
    func subtractingWithBorrow(_ o: UInt512) -> (UInt512, UInt64) {
        let (d0, b0) = subBorrow(l0, o.l0, 0)
        let (d1, b1) = subBorrow(l1, o.l1, b0)
        let (d2, b2) = subBorrow(l2, o.l2, b1)
        let (d3, b3) = subBorrow(l3, o.l3, b2)
        let (d4, b4) = subBorrow(l4, o.l4, b3)
        let (d5, b5) = subBorrow(l5, o.l5, b4)
        let (d6, b6) = subBorrow(l6, o.l6, b5)
        let (d7, b7) = subBorrow(l7, o.l7, b6)
        return (UInt512(d0, d1, d2, d3, d4, d5, d6, d7), b7)
    }

    /// self + o, wrapping (callers keep sums below 2^512). Branch-free.
    @inlinable @inline(__always)
    func adding(_ o: UInt512) -> UInt512 {
        let (s0, c0) = addCarry(l0, o.l0, 0)
        let (s1, c1) = addCarry(l1, o.l1, c0)
        let (s2, c2) = addCarry(l2, o.l2, c1)
        let (s3, c3) = addCarry(l3, o.l3, c2)
        let (s4, c4) = addCarry(l4, o.l4, c3)
        let (s5, c5) = addCarry(l5, o.l5, c4)
        let (s6, c6) = addCarry(l6, o.l6, c5)
        let (s7, _) = addCarry(l7, o.l7, c6)
        return UInt512(s0, s1, s2, s3, s4, s5, s6, s7)
    }

    /// self + o·2^256 (o added to the high half), wrapping. Branch-free.
    @inlinable @inline(__always)
    func addingHigh(_ o: UInt256) -> UInt512 {
        let (s4, c4) = addCarry(l4, o.w0, 0)
        let (s5, c5) = addCarry(l5, o.w1, c4)
        let (s6, c6) = addCarry(l6, o.w2, c5)
        let (s7, _) = addCarry(l7, o.w3, c6)
        return UInt512(l0, l1, l2, l3, s4, s5, s6, s7)
    }
}

extension PrimeFieldElement {
    /// The full product a·b of two 256-bit values, rows accumulated with carry chains.
    @inlinable @inline(__always)
    static func mulWide(_ a: UInt256, _ b: UInt256) -> UInt512 {
        var (p0, p1, p2, p3, p4) = row(a, b.w0)
        var p5: UInt64, p6: UInt64, p7: UInt64
        // Partial sums a·(b mod 2^(64(i+1))) < 2^(320 + 64i): no carry leaves the fifth limb.
        (p1, p2, p3, p4, p5) = addRow(p1, p2, p3, p4, row(a, b.w1))
        (p2, p3, p4, p5, p6) = addRow(p2, p3, p4, p5, row(a, b.w2))
        (p3, p4, p5, p6, p7) = addRow(p3, p4, p5, p6, row(a, b.w3))
        _ = p0
        return UInt512(p0, p1, p2, p3, p4, p5, p6, p7)
    }

    /// (u0..u4) + r with the carry out of the fifth limb (0 or 1).
    @inlinable @inline(__always)
    static func addRowCarry(_ u0: UInt64, _ u1: UInt64, _ u2: UInt64, _ u3: UInt64, _ u4: UInt64,
                            _ r: (UInt64, UInt64, UInt64, UInt64, UInt64))
        -> (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) {
        let (s0, c0) = addCarry(u0, r.0, 0)
        let (s1, c1) = addCarry(u1, r.1, c0)
        let (s2, c2) = addCarry(u2, r.2, c1)
        let (s3, c3) = addCarry(u3, r.3, c2)
        let (s4, c4) = addCarry(u4, r.4, c3)
        return (s0, s1, s2, s3, s4, c4)
    }

    /// Montgomery reduction t·R^-1 mod m of t < m·R (R = 2^256), fully reduced: round i adds
    /// m·q_i·2^(64i) so that limb i becomes zero, passing the carry up. The total stays below
    /// 2mR < 2^511, so nothing leaves the top limb, and t/R < 2m before the final subtraction.
    @inlinable @inline(__always)
    static func montReduce(_ t: UInt512) -> UInt256 {
        let m = M.modulus
        let inv = M.negInverse
        var c: UInt64
        var x1, x2, x3, x4, x5, x6, x7: UInt64
        (_, x1, x2, x3, x4, c) = addRowCarry(t.l0, t.l1, t.l2, t.l3, t.l4, row(m, t.l0 &* inv))
        (x5, c) = addCarry(t.l5, 0, c)
        (x6, c) = addCarry(t.l6, 0, c)
        x7 = t.l7 &+ c
        (_, x2, x3, x4, x5, c) = addRowCarry(x1, x2, x3, x4, x5, row(m, x1 &* inv))
        (x6, c) = addCarry(x6, 0, c)
        x7 = x7 &+ c
        (_, x3, x4, x5, x6, c) = addRowCarry(x2, x3, x4, x5, x6, row(m, x2 &* inv))
        x7 = x7 &+ c
        (_, x4, x5, x6, x7, _) = addRowCarry(x3, x4, x5, x6, x7, row(m, x3 &* inv))
        return reduceOnce(UInt256(x4, x5, x6, x7))
    }

    /// The Legendre symbol (self/p): 1 for a non-zero square, −1 for a non-square, 0 for zero.
    /// **Variable-time**, for public data only (hashing to the curve, decoding): a binary
    /// Jacobi-symbol algorithm whose steps depend on the value (halve while even, with the
    /// sign rule for 2; when a < n swap them, with quadratic reciprocity; subtract).
    /// (As in, e.g., Cohen, "A Course in Computational Algebraic Number Theory", algorithm
    /// 1.4.10, in its subtractive binary form.)
    package var legendreSymbol: Int {
        var a = value
        var n = M.modulus
        var sign = 1
        while !a.isZero {
            while a.w0 & 1 == 0 {
                a = a.shiftedRight1
                let r = n.w0 & 7
                if r == 3 || r == 5 { sign = -sign }
            }
            if a.lessThanMask(n) != 0 {
                swap(&a, &n)
                if a.w0 & 3 == 3 && n.w0 & 3 == 3 { sign = -sign }
            }
            a = a.subtractingWithBorrow(n).0
        }
        return n == UInt256(1) ? sign : 0
    }
}
