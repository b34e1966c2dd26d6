/// Karabina's compressed squaring in the cyclotomic subgroup ("Squaring in cyclotomic
/// subgroups", Mathematics of Computation 82, 2013), for the three powers by u in the final
/// exponentiation.
///
/// An element g = (g0 + g1·s) + (g2 + g3·s)·t + (g4 + g5·s)·t² of the cyclotomic subgroup is
/// determined by (g2, g3, g4, g5), and its square's (h2, h3, h4, h5) depend on those alone:
/// they are exactly the t and t² coefficients of Granger and Scott's squaring
/// (`Fp12.cyclotomicSquared`), which needs the Fp4 squares of b = g2 + g3·s and c = g4 + g5·s but
/// not of a. So a compressed squaring is two Fp4 squarings instead of three. The missing
/// coefficients come back by
///   g1 = (ξ·g5² + 3·g4² − 2·g3) / (4·g2), or 2·g4·g5 / g3 when g2 = 0,
///   g0 = ξ·(2·g1² + g2·g5 − 3·g3·g4) + 1,
/// which costs an inversion, so the values that are needed whole are decompressed together,
/// with one inversion (Montgomery's simultaneous inversion). The g2 = 0 case is chosen by mask,
/// so decompression is constant-time; the identity (all four zero) comes back as 1, since the
/// inverse of 0 is 0.
struct CompressedCyclotomic: Sendable {
    var b: Fp4 // g2 + g3·s
    var c: Fp4 // g4 + g5·s

    init(_ f: Fp12) { b = f.b; c = f.c }

    init(b: Fp4, c: Fp4) { self.b = b; self.c = c }

    /// The compressed square, the same coefficients as `Fp12.cyclotomicSquared`'s b and c.
    var squared: CompressedCyclotomic {
        let b2 = b.squared, c2 = c.squared.timesS
        let nb = c2 + Fp4(c2.a + b.a, c2.b - b.b).doubled
        let nc = b2 + Fp4(b2.a - c.a, b2.b + c.b).doubled
        return CompressedCyclotomic(b: nb, c: nc)
    }

    /// The numerator and denominator of g1 (see the type's description).
    var g1Fraction: (Fp2, Fp2) {
        let g2 = b.a, g3 = b.b, g4 = c.a, g5 = c.b
        let g4sq = g4.squared
        let num = g5.squared.timesXi + g4sq.doubled + g4sq - g3.doubled
        let den = g2.doubled.doubled
        let g45 = g4 * g5
        let g2IsZero = g2.isZeroMask
        return (Fp2.select(g2IsZero, g45.doubled, num), Fp2.select(g2IsZero, g3, den))
    }

    /// The whole element, given g1.
    func decompressed(g1: Fp2) -> Fp12 {
        let g2 = b.a, g3 = b.b, g4 = c.a, g5 = c.b
        let g34 = g3 * g4
        let g0 = (g1.squared.doubled + g2 * g5 - g34.doubled - g34).timesXi + .one
        return Fp12(Fp4(g0, g1), b, c)
    }
}

extension Fp12 {
    /// self^|u| for self in the cyclotomic subgroup: the squarings run from bit 0 up, and the
    /// powers self^(2^k) at the non-zero NAF digits k of |u| are multiplied together (the
    /// conjugate for a digit −1). Up to bit `Pairing.compressionStart` the squarings are
    /// Granger and Scott's; above it they are compressed (`CompressedCyclotomic`), and the
    /// powers needed there are decompressed together at the end. For |u| that is 50 of 62
    /// squarings with two Fp4 squarings instead of three, for one inversion and three
    /// decompressions. The schedule depends only on the constant u.
    func cyclotomicPowerU() -> Fp12 {
        let digits = Pairing.uNAFFromLow
        let start = Pairing.compressionStart
        @inline(__always) func signed(_ v: Fp12, _ digit: Int8) -> Fp12 { digit < 0 ? v.conjugate : v }
        var x = self
        var acc: Fp12? = digits[0] != 0 ? signed(self, digits[0]) : nil
        @inline(__always) func accumulate(_ v: Fp12) { acc = acc.map { $0 * v } ?? v }
        if start > 0 {
            for k in 1...start {
                x = x.cyclotomicSquared
                if digits[k] != 0 { accumulate(signed(x, digits[k])) }
            }
        }
        // Compressed from here; the powers needed are kept and decompressed together (in
        // InlineArrays, which the loops below read in place; at most 16 of them).
        var saved = InlineArray<16, CompressedCyclotomic>(repeating: CompressedCyclotomic(x))
        var savedDigits = InlineArray<16, Int8>(repeating: 0)
        var count = 0
        var c = CompressedCyclotomic(x)
        for k in (start + 1)..<digits.count {
            c = c.squared
            if digits[k] != 0 {
                saved[count] = c
                savedDigits[count] = digits[k]
                count += 1
            }
        }
        // Simultaneous inversion of the denominators: prefix[i] = den_0 ⋯ den_i.
        var nums = InlineArray<16, Fp2>(repeating: .zero)
        var dens = InlineArray<16, Fp2>(repeating: .zero)
        var prefix = InlineArray<16, Fp2>(repeating: .zero)
        for i in 0..<count {
            (nums[i], dens[i]) = saved[i].g1Fraction
            prefix[i] = i == 0 ? dens[i] : prefix[i - 1] * dens[i]
        }
        var inverse = prefix[count - 1].inverse // (den_0 ⋯ den_i)⁻¹ for i = count − 1
        for i in stride(from: count - 1, through: 0, by: -1) {
            let denInverse = i == 0 ? inverse : inverse * prefix[i - 1]
            if i > 0 { inverse = inverse * dens[i] }
            accumulate(signed(saved[i].decompressed(g1: nums[i] * denInverse), savedDigits[i]))
        }
        return acc!
    }
}

extension Pairing {
    /// The NAF digits of |u|, least significant first.
    static let uNAFFromLow: [Int8] = uNAF.reversed()

    /// The bit above which `Fp12.cyclotomicPowerU` squares compressed: the non-zero digit
    /// position P that maximises the saving, in Fp2 multiplications, of compressing every
    /// squaring above it (two each) against decompressing every power needed above it (about
    /// thirteen each, with its share of the simultaneous inversion) and the one inversion
    /// (about twenty). For |u| it is 12: the squarings from bit 12 to 62 are compressed, and
    /// the powers at bits 22, 26 and 62 decompressed.
    static let compressionStart: Int = {
        let digits = uNAFFromLow
        let top = digits.count - 1
        var best = 0, bestSaving = Int.min
        for p in 0..<top where digits[p] != 0 {
            let needed = (p + 1...top).filter { digits[$0] != 0 }.count
            let saving = 2 * (top - p) - 13 * needed - 20
            if saving > bestSaving { best = p; bestSaving = saving }
        }
        return best
    }()
}
