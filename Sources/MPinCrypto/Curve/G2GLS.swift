/// Scalar multiplication in G2 with the endomorphism ψ (untwist, Frobenius, twist), which acts
/// on G2 as multiplication by λ = 6u² ≡ p (mod r) (Galbraith, Lin and Scott, "Endomorphisms for
/// faster elliptic curve cryptography on a large class of curves", EUROCRYPT 2009;
/// `G2Point.isInPrimeOrderSubgroup` relies on the same eigenvalue).
///
/// k mod r is split four ways, k ≡ k0 + k1·λ + k2·λ² + k3·λ³ (mod r) with |kj| < 2^66, so that
/// k·Q = k0·Q + k1·ψ(Q) + k2·ψ²(Q) + k3·ψ³(Q): a quarter of the doublings of the plain method
/// and half those of a two-way split (Galbraith and Scott, "Exponentiation in pairing-friendly
/// groups using homomorphisms", Pairing 2008, split G2 of BN curves four ways). The split is
/// Babai's rounding against a reduced basis of the lattice {(a0, a1, a2, a3) : a0 + a1·λ +
/// a2·λ² + a3·λ³ ≡ 0 (mod r)}, whose rows, in u = −0x4000000003C012B1, are
///   b0 = (2u+1, 0, 2u, 1),  b1 = (−(2u+1), u, u+1, u),  b2 = (u, −u, u, 2u+1),
///   b3 = (−2u, −u−1, u, −u)
/// (found by LLL reduction and checked: every row is in the lattice, the determinant is −r).
/// (k, 0, 0, 0) = Σ βi·bi with βi = k·ci/r for the first row (c0, c1, c2, c3) of r·B⁻¹; with βi
/// estimated as ⌊k·gi/2^256⌋, gi = ⌊2^256·|ci|/r⌋ (an error below 2 each), the remainder
/// (k, 0, 0, 0) − Σ βi·bi has |kj| < 2·Σi |bi,j| < 2^66. This holds only on G2 (ψ is
/// multiplication by λ only there), so the generic `multiplied(by:)` remains the one for
/// arbitrary points of the twist.
///
/// Constant-time in k: the split is fixed-length wrapping arithmetic (two's complement modulo
/// 2^256; the true results are small), the signs are applied by mask, the four window tables
/// are scanned in full, and the schedule (17 windows) is fixed.
enum G2GLS {
    /// The basis rows bi as 256-bit two's complement numbers (their entries need 64 bits and a
    /// sign, more than Int64 holds).
    static let basis: [(UInt256, UInt256, UInt256, UInt256)] = [
        (UInt256(0x7ffffffff87fda9f, .max, .max, .max), .zero,
         UInt256(0x7ffffffff87fda9e, .max, .max, .max), UInt256(1)),
        (UInt256(0x8000000007802561), UInt256(0xbffffffffc3fed4f, .max, .max, .max),
         UInt256(0xbffffffffc3fed50, .max, .max, .max), UInt256(0xbffffffffc3fed4f, .max, .max, .max)),
        (UInt256(0xbffffffffc3fed4f, .max, .max, .max), UInt256(0x4000000003c012b1),
         UInt256(0xbffffffffc3fed4f, .max, .max, .max), UInt256(0x7ffffffff87fda9f, .max, .max, .max)),
        (UInt256(0x8000000007802562), UInt256(0x4000000003c012b0),
         UInt256(0xbffffffffc3fed4f, .max, .max, .max), UInt256(0x4000000003c012b1)),
    ]
    /// gi = ⌊2^256·|ci|/r⌋, and whether ci < 0 (only c0 is).
    static let rounding: [(g: UInt256, negative: Bool)] = [
        (UInt256(0x02b08b1b7e5f12cf, 0xab40b08209307989, 0xaaaaaaaaa0aa78d2, 0), true),
        (UInt256(0xad5b35c7190e69ac, 0xab40b08209307983, 0xaaaaaaaaa0aa78d2, 0), false),
        (UInt256(0x8e38e38d98e070c0, 0x0000000000000003, 0, 0), false),
        (UInt256(0x7b7feda5639c7e18, 0x55eb5b2c63d99575, 0xaaaaaaaaa0aa78d5, 0), false),
    ]
    /// Signed 4-bit digits of a split magnitude (below 2^66), in the offset form of `G1GLV`:
    /// with offset 8·(1 + 16 + ⋯ + 16^16), the 17 windows w_i of |kj| + offset give the digits
    /// w_i − 8 in [−8, 7], since |kj| + offset < 2^66 + 0.54·2^68 < 16^17.
    static let windows = 17
    static let signedOffset = UInt256(0x8888_8888_8888_8888, 0x8, 0, 0)

    /// (|kj|, kj < 0 mask) for j = 0...3, with k ≡ k0 + k1·λ + k2·λ² + k3·λ³ (mod r).
    static func split(_ scalar: UInt256) -> [(UInt256, UInt64)] {
        let k = Fr(scalar).value
        var parts = [k, UInt256.zero, .zero, .zero]
        for i in 0..<4 {
            let magnitude = k.multipliedFullWidth(by: rounding[i].g).high
            let beta = rounding[i].negative ? magnitude.negatedWrapping : magnitude // public sign
            let b = basis[i]
            parts[0] = parts[0].subtractingWithBorrow(beta.multipliedLow(by: b.0)).0
            parts[1] = parts[1].subtractingWithBorrow(beta.multipliedLow(by: b.1)).0
            parts[2] = parts[2].subtractingWithBorrow(beta.multipliedLow(by: b.2)).0
            parts[3] = parts[3].subtractingWithBorrow(beta.multipliedLow(by: b.3)).0
        }
        return parts.map { part in
            let negative = Mask.ofSign(part.w3)
            return (UInt256.select(negative, part.negatedWrapping, part), negative)
        }
    }
}

extension ProjectivePoint where C == BN254G2Curve {
    /// k·Q for a secret scalar (any 256-bit value) and Q **in G2** (the generator, or a point
    /// decoded with the subgroup check): the four-way ψ split of `G2GLS` and signed 4-bit
    /// digits, as G1's GLV multiplication: a table of 0·Q ... 8·Q (7 point operations) and its
    /// images under ψ, ψ², ψ³ (cheap: conjugations and two Fp2 multiplications per point),
    /// each negated by mask when its part of k is negative; 17 windows of 4 doublings and
    /// 4 additions, each table scanned in full, the digit's sign applied by masked negation.
    /// Equal to `multiplied(by:)` on G2; wrong outside it.
    package func multipliedInG2(by k: UInt256) -> G2Point {
        let parts = G2GLS.split(k)
        let t0 = FixedTable16<G2Point>(multiplesOf: self, through: 8)
        /// The images of a table's entries under ψ (ψ(i·Q) = i·ψ(Q)).
        func psi(_ t: FixedTable16<G2Point>) -> FixedTable16<G2Point> {
            var out = t
            for i in 1...8 { out[i] = out[i].psi }
            return out
        }
        /// The table with every entry negated where `mask` is all-ones.
        func signed(_ t: FixedTable16<G2Point>, _ mask: UInt64) -> FixedTable16<G2Point> {
            var out = t
            for i in 1...8 {
                let entry = out[i]
                out[i] = G2Point.select(mask, -entry, entry)
            }
            return out
        }
        /// The images under ψ² (`G2Point.psiSquared`: an Fp scaling and a negation).
        func psiSquared(_ t: FixedTable16<G2Point>) -> FixedTable16<G2Point> {
            var out = t
            for i in 1...8 { out[i] = out[i].psiSquared }
            return out
        }
        let t1 = psi(t0), t2 = psiSquared(t0), t3 = psiSquared(t1)
        var s0 = signed(t0, parts[0].1), s1 = signed(t1, parts[1].1)
        var s2 = signed(t2, parts[2].1), s3 = signed(t3, parts[3].1)
        let d0 = parts[0].0.addingWithCarry(G2GLS.signedOffset).0
        let d1 = parts[1].0.addingWithCarry(G2GLS.signedOffset).0
        let d2 = parts[2].0.addingWithCarry(G2GLS.signedOffset).0
        let d3 = parts[3].0.addingWithCarry(G2GLS.signedOffset).0
        // The top window starts the sum: no doublings of the point at infinity.
        let top = G2GLS.windows - 1
        var acc = s0.selectSigned(d0.bits(at: 4 * top, width: 4)) + s1.selectSigned(d1.bits(at: 4 * top, width: 4))
            + s2.selectSigned(d2.bits(at: 4 * top, width: 4)) + s3.selectSigned(d3.bits(at: 4 * top, width: 4))
        for window in stride(from: top - 1, through: 0, by: -1) {
            acc = acc.doubled.doubled.doubled.doubled
            acc = acc + s0.selectSigned(d0.bits(at: 4 * window, width: 4))
            acc = acc + s1.selectSigned(d1.bits(at: 4 * window, width: 4))
            acc = acc + s2.selectSigned(d2.bits(at: 4 * window, width: 4))
            acc = acc + s3.selectSigned(d3.bits(at: 4 * window, width: 4))
        }
        return acc
    }
}

/// Fixed-base multiplication by the G2 generator (serverSecret, DVS public keys): the
/// multiples j·16^i·Q for every 4-bit digit position i < 64 and j < 16 are computed once
/// (64 tables of 16 points, about 196 KB, on first use), so that k·Q is the sum of one entry
/// per digit: 64 additions and no doubling. Each table is scanned in full and every position
/// is added (a zero digit adds the point at infinity with the complete formula), so neither
/// the operations nor the memory read depend on k. (The fixed-base comb idea as in, e.g.,
/// the Handbook of Applied Cryptography, algorithm 14.109, with one window per table.)
struct G2GeneratorTable: Sendable {
    let rows: [FixedTable16<G2Point>]

    static let shared = G2GeneratorTable()

    private init() {
        var rows = [FixedTable16<G2Point>]()
        rows.reserveCapacity(64)
        var base = G2Point.generator
        for _ in 0..<64 {
            var table = FixedTable16<G2Point>(multiplesOf: base)
            rows.append(table)
            base = table[15] + base // 16·base
        }
        self.rows = rows
    }
}

extension ProjectivePoint where C == BN254G2Curve {
    /// k·Q for the G2 generator Q and a secret scalar (any 256-bit value), from the
    /// precomputed tables of `G2GeneratorTable`. Equal to `generator.multiplied(by: k)`.
    package static func generatorMultiple(_ k: UInt256) -> G2Point {
        // Read in place: `rows[i]` would copy each 3 KB table out of the array first.
        G2GeneratorTable.shared.rows.withUnsafeBufferPointer { rows in
            var acc = G2Point.infinity
            for i in 0..<64 {
                let table = UnsafeRawBufferPointer(start: rows.baseAddress! + i,
                                                   count: MemoryLayout<FixedTable16<G2Point>>.size)
                acc = acc + FixedTable16<G2Point>.select(in: table, k.bits(at: 4 * i, width: 4))
            }
            return acc
        }
    }
}
