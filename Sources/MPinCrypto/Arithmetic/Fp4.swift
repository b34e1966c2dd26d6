/// Fp4 = Fp2[s]/(s² − ξ) with ξ = 1 + i: elements a + b·s. Milagro's middle tower level.
package struct Fp4: FieldArithmetic {
    package var a: Fp2
    package var b: Fp2

    @inlinable
    package init(_ a: Fp2, _ b: Fp2) { self.a = a; self.b = b }

    package static let zero = Fp4(.zero, .zero)
    package static let one = Fp4(.one, .zero)

    @inlinable
    package static func + (x: Fp4, y: Fp4) -> Fp4 { Fp4(x.a + y.a, x.b + y.b) }
    @inlinable
    package static func - (x: Fp4, y: Fp4) -> Fp4 { Fp4(x.a - y.a, x.b - y.b) }
    @inlinable
    package static prefix func - (x: Fp4) -> Fp4 { Fp4(-x.a, -x.b) }

    // Multiplication, Karatsuba over Fp2 with s² = ξ and lazy reduction: Fp4+Lazy.swift.

    /// (a + bs)² = a² + ξb² + 2ab·s, as (a+b)(a+ξb) − ab − ξab for the constant part.
    @inlinable
    package var squared: Fp4 {
        let ab = a * b
        let c0 = (a + b) * (a + b.timesXi) - ab - ab.timesXi
        return Fp4(c0, ab.doubled)
    }

    @inlinable
    package var doubled: Fp4 { Fp4(a.doubled, b.doubled) }

    /// Multiplies by s: (a + bs)·s = ξb + a·s.
    @inlinable
    package var timesS: Fp4 { Fp4(b.timesXi, a) }

    /// Multiplies by an element of Fp2.
    @inlinable
    package func scaled(by k: Fp2) -> Fp4 { Fp4(a * k, b * k) }

    /// a − b·s (the conjugate over Fp2).
    @inlinable
    package var conjugate: Fp4 { Fp4(a, -b) }

    /// 1/(a + bs) = (a − bs)/(a² − ξb²).
    package var inverse: Fp4 {
        let d = (a.squared - b.squared.timesXi).inverse
        return Fp4(a * d, -(b * d))
    }

    @inlinable
    package var isZeroMask: UInt64 { a.isZeroMask & b.isZeroMask }

    /// All-ones when equal, else 0. Constant-time: every coefficient is compared.
    @inlinable
    package func equalMask(_ o: Fp4) -> UInt64 { a.equalMask(o.a) & b.equalMask(o.b) }

    /// Constant-time equality (all coefficients compared, see `FieldArithmetic`).
    @inlinable
    package static func == (x: Fp4, y: Fp4) -> Bool { x.equalMask(y) != 0 }

    @inlinable
    package static func select(_ mask: UInt64, _ x: Fp4, _ y: Fp4) -> Fp4 {
        Fp4(Fp2.select(mask, x.a, y.a), Fp2.select(mask, x.b, y.b))
    }

    /// The Frobenius map x ↦ x^p, given f = ξ^((p−1)/6). s^p = s·f³ since s = t³.
    func frobenius(f3: Fp2) -> Fp4 { Fp4(a.conjugate, b.conjugate * f3) }
}
