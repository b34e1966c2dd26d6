/// Fp12 = Fp4[t]/(t³ − s): elements a + b·t + c·t², Milagro's tower for the pairing group GT.
///
/// As powers of t over Fp2 (t⁶ = ξ): t⁰ = a.a, t¹ = b.a, t² = c.a, t³ = a.b, t⁴ = b.b, t⁵ = c.b.
package struct Fp12: FieldArithmetic {
    package var a: Fp4
    package var b: Fp4
    package var c: Fp4

    @inlinable
    package init(_ a: Fp4, _ b: Fp4, _ c: Fp4) { self.a = a; self.b = b; self.c = c }

    package static let zero = Fp12(.zero, .zero, .zero)
    package static let one = Fp12(.one, .zero, .zero)

    @inlinable
    package static func + (x: Fp12, y: Fp12) -> Fp12 { Fp12(x.a + y.a, x.b + y.b, x.c + y.c) }
    @inlinable
    package static func - (x: Fp12, y: Fp12) -> Fp12 { Fp12(x.a - y.a, x.b - y.b, x.c - y.c) }
    @inlinable
    package static prefix func - (x: Fp12) -> Fp12 { Fp12(-x.a, -x.b, -x.c) }
    @inlinable
    package var doubled: Fp12 { self + self }

    /// Karatsuba for a cubic extension with t³ = s: six Fp4 multiplications.
    @inlinable
    package static func * (x: Fp12, y: Fp12) -> Fp12 {
        let aa = x.a * y.a
        let bb = x.b * y.b
        let cc = x.c * y.c
        let c0 = aa + ((x.b + x.c) * (y.b + y.c) - bb - cc).timesS
        let c1 = (x.a + x.b) * (y.a + y.b) - aa - bb + cc.timesS
        let c2 = (x.a + x.c) * (y.a + y.c) - aa - cc + bb
        return Fp12(c0, c1, c2)
    }

    /// Chung–Hasan squaring (SQR2) for a cubic extension.
    @inlinable
    package var squared: Fp12 {
        let s0 = a.squared
        let ab = a * b
        let s1 = ab.doubled
        let s2 = (a - b + c).squared
        let bc = b * c
        let s3 = bc.doubled
        let s4 = c.squared
        return Fp12(s0 + s3.timesS, s1 + s4.timesS, s1 + s2 + s3 - s0 - s4)
    }

    /// 1/x via the adjugate of the multiplication matrix; zero maps to zero.
    package var inverse: Fp12 {
        let t0 = a.squared - (b * c).timesS
        let t1 = c.squared.timesS - a * b
        let t2 = b.squared - a * c
        let det = a * t0 + (c * t1 + b * t2).timesS
        let d = det.inverse
        return Fp12(t0 * d, t1 * d, t2 * d)
    }

    /// x^(p⁶): negates the odd powers of t. For elements of the cyclotomic subgroup (every
    /// pairing value) this is the inverse.
    @inlinable
    package var conjugate: Fp12 { Fp12(a.conjugate, -b.conjugate, c.conjugate) }

    @inlinable
    package var isZeroMask: UInt64 { a.isZeroMask & b.isZeroMask & c.isZeroMask }

    /// All-ones when equal, else 0. Constant-time: every coefficient is compared.
    @inlinable
    package func equalMask(_ o: Fp12) -> UInt64 { a.equalMask(o.a) & b.equalMask(o.b) & c.equalMask(o.c) }

    /// Constant-time equality (all coefficients compared, see `FieldArithmetic`).
    @inlinable
    package static func == (x: Fp12, y: Fp12) -> Bool { x.equalMask(y) != 0 }

    @inlinable
    package static func select(_ mask: UInt64, _ x: Fp12, _ y: Fp12) -> Fp12 {
        Fp12(Fp4.select(mask, x.a, y.a), Fp4.select(mask, x.b, y.b), Fp4.select(mask, x.c, y.c))
    }

    /// Whether this is 1. Constant-time.
    package var isOne: Bool { equalMask(.one) != 0 }

    /// The Frobenius map x ↦ x^p: conjugate every Fp2 coefficient and scale tᵏ by fᵏ,
    /// f = ξ^((p−1)/6).
    package var frobenius: Fp12 {
        let f = FrobeniusConstants.shared
        return Fp12(Fp4(a.a.conjugate, a.b.conjugate * f.f3),
                    Fp4(b.a.conjugate * f.f1, b.b.conjugate * f.f4),
                    Fp4(c.a.conjugate * f.f2, c.b.conjugate * f.f5))
    }

    /// x^(p^n).
    package func frobenius(_ n: Int) -> Fp12 {
        var r = self
        for _ in 0..<n { r = r.frobenius }
        return r
    }

    /// self^e for a public exponent (left-to-right square and multiply).
    package func power(publicExponent e: UInt256) -> Fp12 {
        var r = Fp12.one
        let n = e.bitLength
        var i = n - 1
        while i >= 0 {
            r = r.squared
            if e.bit(i) == 1 { r = r * self }
            i -= 1
        }
        return r
    }

    /// self^e in constant time (fixed 256 squarings, multiply-always with selection).
    package func power(secretExponent e: UInt256) -> Fp12 {
        var r = Fp12.one
        for i in stride(from: 255, through: 0, by: -1) {
            r = r.squared
            r = Fp12.select(Mask.ofBit(e.bit(i)), r * self, r)
        }
        return r
    }

    // MARK: Encoding

    /// The twelve Fp coefficients in Milagro's octet order
    /// a.a.a, a.a.b, a.b.a, a.b.b, b.a.a, ..., c.b.b.
    package var coefficients: [Fp] {
        [a.a.a, a.a.b, a.b.a, a.b.b, b.a.a, b.a.b, b.b.a, b.b.b, c.a.a, c.a.b, c.b.a, c.b.b]
    }

    /// Builds an element from twelve coefficients in Milagro's order.
    package init(coefficients k: [Fp]) {
        precondition(k.count == 12, "Fp12 needs 12 coefficients")
        self.init(Fp4(Fp2(k[0], k[1]), Fp2(k[2], k[3])),
                  Fp4(Fp2(k[4], k[5]), Fp2(k[6], k[7])),
                  Fp4(Fp2(k[8], k[9]), Fp2(k[10], k[11])))
    }

    /// 384 bytes: the twelve coefficients, 32 big-endian bytes each (Milagro's GT octet).
    package var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 384)
        for (k, v) in coefficients.enumerated() { v.value.writeBigEndian(into: &out, at: 32 * k) }
        return out
    }

    /// Decodes Milagro's 384-byte GT octet. Each coefficient must be canonical (< p).
    package init(bytes: [UInt8]) throws(MPinCryptoError) {
        guard bytes.count == 384 else { throw .invalidLength(expected: 384, got: bytes.count) }
        var k = [Fp]()
        k.reserveCapacity(12)
        for i in 0..<12 {
            guard let v = Fp(canonicalBytes: bytes[(32 * i)..<(32 * i + 32)]) else { throw .nonCanonical }
            k.append(v)
        }
        self.init(coefficients: k)
    }
}

/// Powers of the Frobenius constant f = ξ^((p−1)/6) = (1+i)^((p−1)/6).
struct FrobeniusConstants: Sendable {
    let f1: Fp2, f2: Fp2, f3: Fp2, f4: Fp2, f5: Fp2
    /// f²·conj(f²) = ξ^((p²−1)/3), in Fp (a norm): what ψ² multiplies X by (`G2Point.psiSquared`).
    let psiSquaredX: Fp

    static let shared = FrobeniusConstants()

    private init() {
        let f = Fp2(Fp(UInt256(hex: "1359082fa63a0164afe18b8aaca7189868677326f173f8215bd9083355c80ea3")!),
                    Fp(UInt256(hex: "10a6f7d0623628a900dc53d9cdbc4e3abbd863c7269546c0628d1bbc06534710")!))
        f1 = f
        f2 = f * f
        f3 = f2 * f
        f4 = f3 * f
        f5 = f4 * f
        psiSquaredX = (f2 * f2.conjugate).a
    }
}
