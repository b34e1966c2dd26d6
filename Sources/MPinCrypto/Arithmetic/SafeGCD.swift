/// Constant-time modular inversion by Bernstein and Yang's "safegcd" (Bernstein and Yang, "Fast
/// constant-time gcd computation and modular inversion", TCHES 2019), in the form with batches
/// of 62 division steps on the low 64 bits and a 2×2 transition matrix applied to the full
/// values afterwards (the form libsecp256k1 documents in its safegcd implementation notes).
///
/// Why: Fermat's x^(m−2) costs about 300 multiplications (10 µs here), and every encoding of a
/// point, every pairing's final exponentiation and every affine conversion pays one. This runs
/// a fixed 12 × 62 division steps, each a few masked word operations, whatever the input.
///
/// The division step on (δ, f, g), f odd: when δ > 0 and g is odd, (1 − δ, g, (g − f)/2);
/// when g is odd, (1 + δ, f, (g + f)/2); else (1 + δ, f, g/2). From f = m (odd), g = x it
/// reaches g = 0, f = ±gcd = ±1 within 736 steps for a 254-bit m ((49·254 + 57)/17, the
/// paper's bound). Alongside, d and e with d·x ≡ f and e·x ≡ g (mod m) start at 0 and 1 and
/// take the same linear steps, so at the end x⁻¹ = ±d.
///
/// Numbers are signed, in five limbs of 62 bits (limbs 0–3 in [0, 2^62), limb 4 signed), so
/// that a matrix entry (at most 2^62 in absolute value) times a limb plus a carry fits 128 bits.
/// Every branch below is on a loop counter; the value-dependent choices are masks. The 128-bit
/// arithmetic wraps (&*, &+): the bounds above keep it exact, and the checked operators would
/// call the overflow-checking 128-bit multiplication routine.
@usableFromInline
struct Signed62: Sendable {
    @usableFromInline var l0: Int64, l1: Int64, l2: Int64, l3: Int64, l4: Int64

    @inlinable init(_ l0: Int64, _ l1: Int64, _ l2: Int64, _ l3: Int64, _ l4: Int64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3; self.l4 = l4
    }

    static let mask62: Int64 = (1 << 62) - 1

    /// The limbs of a 256-bit value.
    init(_ v: UInt256) {
        let m = UInt64(bitPattern: Signed62.mask62)
        self.init(Int64(bitPattern: v.w0 & m),
                  Int64(bitPattern: (v.w0 >> 62 | v.w1 << 2) & m),
                  Int64(bitPattern: (v.w1 >> 60 | v.w2 << 4) & m),
                  Int64(bitPattern: (v.w2 >> 58 | v.w3 << 6) & m),
                  Int64(bitPattern: v.w3 >> 56))
    }

    /// The 256-bit value of normalised limbs (limbs 0–3 in [0, 2^62), limb 4 in [0, 2^8)).
    var uint256: UInt256 {
        let a = UInt64(bitPattern: l0), b = UInt64(bitPattern: l1), c = UInt64(bitPattern: l2)
        let d = UInt64(bitPattern: l3), e = UInt64(bitPattern: l4)
        return UInt256(a | b << 62, b >> 2 | c << 60, c >> 4 | d << 58, d >> 6 | e << 56)
    }

    /// All-ones when the value is negative (the sign of the top limb).
    var signMask: Int64 { l4 >> 63 }

    /// Limbs 0–3 brought back into [0, 2^62), their excess carried up (arithmetically).
    mutating func propagateCarries() {
        l1 &+= l0 >> 62; l0 &= Signed62.mask62
        l2 &+= l1 >> 62; l1 &= Signed62.mask62
        l3 &+= l2 >> 62; l2 &= Signed62.mask62
        l4 &+= l3 >> 62; l3 &= Signed62.mask62
    }

    /// self + (m where `mask` is all-ones), limbs not yet propagated.
    mutating func add(_ m: Signed62, masked mask: Int64) {
        l0 &+= m.l0 & mask; l1 &+= m.l1 & mask; l2 &+= m.l2 & mask; l3 &+= m.l3 & mask; l4 &+= m.l4 & mask
    }

    /// −self where `mask` is all-ones, self where it is zero, limbs not yet propagated.
    mutating func negate(masked mask: Int64) {
        l0 = (l0 ^ mask) &- mask; l1 = (l1 ^ mask) &- mask; l2 = (l2 ^ mask) &- mask
        l3 = (l3 ^ mask) &- mask; l4 = (l4 ^ mask) &- mask
    }

    @inlinable func limb(_ i: Int) -> Int64 {
        switch i {
        case 0: l0
        case 1: l1
        case 2: l2
        case 3: l3
        default: l4
        }
    }

    @inlinable mutating func setLimb(_ i: Int, _ v: Int64) {
        switch i {
        case 0: l0 = v
        case 1: l1 = v
        case 2: l2 = v
        case 3: l3 = v
        default: l4 = v
        }
    }
}

/// The transition matrix of 62 division steps: 2^62·(f′, g′) = (u·f + v·g, q·f + r·g).
struct Transition {
    var u: Int64, v: Int64, q: Int64, r: Int64
}

enum SafeGCD {
    /// 12 batches of 62 steps: 744 ≥ 736, the bound for moduli below 2^254.
    static let batches = 12

    /// 62 division steps on the low 64 bits of f and g (f odd), from δ; returns the new δ and
    /// the matrix. Each step is the same masked operations whatever the bits:
    ///   c1 = all-ones when δ > 0 and g is odd (swap), c2 = all-ones when g is odd;
    ///   g += ±f, (q, r) += ±(u, v) when g is odd (minus when swapping);
    ///   when swapping: δ = −δ, and f, (u, v) take the old g, (q, r) (added back as f + (g − f));
    ///   then δ += 1, g /= 2 and (u, v) doubled (the halving of g is kept as a doubling of the
    ///   other row, so that the matrix stays integral).
    static func divsteps62(_ delta: Int64, _ f0: UInt64, _ g0: UInt64) -> (Int64, Transition) {
        var delta = delta
        var f = f0, g = g0
        var u: Int64 = 1, v: Int64 = 0, q: Int64 = 0, r: Int64 = 1
        for _ in 0..<62 {
            let gOdd = Int64(bitPattern: valueBarrier(0 &- (g & 1)))
            let c1 = Int64(bitPattern: valueBarrier(UInt64(bitPattern: (0 &- delta) >> 63))) & gOdd
            let c2 = gOdd
            let x = (Int64(bitPattern: f) ^ c1) &- c1
            let y = (u ^ c1) &- c1
            let z = (v ^ c1) &- c1
            g = g &+ UInt64(bitPattern: x & c2)
            q = q &+ (y & c2)
            r = r &+ (z & c2)
            delta = (delta ^ c1) &- c1
            f = f &+ (g & UInt64(bitPattern: c1))
            u = u &+ (q & c1)
            v = v &+ (r & c1)
            delta = delta &+ 1
            g >>= 1
            u = u &<< 1
            v = v &<< 1
        }
        return (delta, Transition(u: u, v: v, q: q, r: r))
    }

    /// (f, g) ← (u·f + v·g, q·f + r·g) / 2^62, exactly (the low 62 bits are zero by construction).
    static func updateFG(_ f: inout Signed62, _ g: inout Signed62, _ t: Transition) {
        let m = Int128(Signed62.mask62)
        var cf = Int128(t.u) &* Int128(f.l0) &+ Int128(t.v) &* Int128(g.l0)
        var cg = Int128(t.q) &* Int128(f.l0) &+ Int128(t.r) &* Int128(g.l0)
        cf >>= 62; cg >>= 62
        for i in 1..<5 {
            cf &+= Int128(t.u) &* Int128(f.limb(i)) &+ Int128(t.v) &* Int128(g.limb(i))
            cg &+= Int128(t.q) &* Int128(f.limb(i)) &+ Int128(t.r) &* Int128(g.limb(i))
            if i < 4 {
                f.setLimb(i - 1, Int64(truncatingIfNeeded: cf & m))
                g.setLimb(i - 1, Int64(truncatingIfNeeded: cg & m))
                cf >>= 62; cg >>= 62
            } else {
                f.l3 = Int64(truncatingIfNeeded: cf & m); g.l3 = Int64(truncatingIfNeeded: cg & m)
                f.l4 = Int64(truncatingIfNeeded: cf >> 62); g.l4 = Int64(truncatingIfNeeded: cg >> 62)
            }
        }
    }

    /// (d, e) ← (u·d + v·e, q·d + r·e) / 2^62 (mod m), d and e kept in (−2m, m): a multiple
    /// of m is added to each so that the low 62 bits vanish (its factor from m⁻¹ mod 2^62), and
    /// m times the matrix entries of the negative inputs beforehand, which keeps the result in
    /// range for |u| + |v| ≤ 2^62 (the bound libsecp256k1's notes derive).
    static func updateDE(_ d: inout Signed62, _ e: inout Signed62, _ t: Transition,
                         modulus mm: Signed62, inverse62: Int64) {
        let m = Int128(Signed62.mask62)
        let sd = d.signMask, se = e.signMask
        var md = (t.u & sd) &+ (t.v & se)
        var me = (t.q & sd) &+ (t.r & se)
        var cd = Int128(t.u) &* Int128(d.l0) &+ Int128(t.v) &* Int128(e.l0)
        var ce = Int128(t.q) &* Int128(d.l0) &+ Int128(t.r) &* Int128(e.l0)
        md = md &- ((inverse62 &* Int64(truncatingIfNeeded: cd) &+ md) & Signed62.mask62)
        me = me &- ((inverse62 &* Int64(truncatingIfNeeded: ce) &+ me) & Signed62.mask62)
        cd &+= Int128(mm.l0) &* Int128(md)
        ce &+= Int128(mm.l0) &* Int128(me)
        cd >>= 62; ce >>= 62
        for i in 1..<5 {
            cd &+= Int128(t.u) &* Int128(d.limb(i)) &+ Int128(t.v) &* Int128(e.limb(i)) &+ Int128(mm.limb(i)) &* Int128(md)
            ce &+= Int128(t.q) &* Int128(d.limb(i)) &+ Int128(t.r) &* Int128(e.limb(i)) &+ Int128(mm.limb(i)) &* Int128(me)
            if i < 4 {
                d.setLimb(i - 1, Int64(truncatingIfNeeded: cd & m))
                e.setLimb(i - 1, Int64(truncatingIfNeeded: ce & m))
                cd >>= 62; ce >>= 62
            } else {
                d.l3 = Int64(truncatingIfNeeded: cd & m); e.l3 = Int64(truncatingIfNeeded: ce & m)
                d.l4 = Int64(truncatingIfNeeded: cd >> 62); e.l4 = Int64(truncatingIfNeeded: ce >> 62)
            }
        }
    }

    /// x⁻¹ mod m for an odd modulus m < 2^254 and x < m (0 gives 0), in constant time.
    /// `negInverse` is −m⁻¹ mod 2^64 (the Montgomery constant).
    static func inverse(_ x: UInt256, modulus: UInt256, negInverse: UInt64) -> UInt256 {
        let mm = Signed62(modulus)
        // m⁻¹ mod 2^62 from −m⁻¹ mod 2^64.
        let inverse62 = Int64(bitPattern: 0 &- negInverse) & Signed62.mask62
        var f = mm, g = Signed62(x)
        var d = Signed62(0, 0, 0, 0, 0), e = Signed62(1, 0, 0, 0, 0)
        var delta: Int64 = 1
        for _ in 0..<batches {
            let (newDelta, t) = divsteps62(delta, UInt64(bitPattern: f.l0 | f.l1 << 62), UInt64(bitPattern: g.l0 | g.l1 << 62))
            delta = newDelta
            updateFG(&f, &g, t)
            updateDE(&d, &e, t, modulus: mm, inverse62: inverse62)
        }
        // Now g = 0 and f = ±1 (for x ≠ 0), d in (−2m, m) with d·x ≡ f. Into (−m, m), times the
        // sign of f, then into [0, m).
        d.add(mm, masked: d.signMask)
        d.propagateCarries()
        d.negate(masked: f.signMask)
        d.propagateCarries()
        d.add(mm, masked: d.signMask)
        d.propagateCarries()
        return d.uint256
    }
}
