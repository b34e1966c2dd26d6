/// Scalar multiplication in G2 with the endomorphism ψ (untwist, Frobenius, twist), which acts
/// on G2 as multiplication by λ = t − 1 = 6u² ≡ p (mod r), a 127-bit number (Galbraith, Lin and
/// Scott, "Endomorphisms for faster elliptic curve cryptography on a large class of curves",
/// EUROCRYPT 2009; `G2Point.isInPrimeOrderSubgroup` relies on the same eigenvalue).
///
/// k mod r (< 2^254) is split as k = k1·λ + k0 with 0 ≤ k0 < λ and k1 = ⌊k/λ⌋ < 2^127, so
/// k·Q = k0·Q + k1·ψ(Q) with two scalars of 127 bits: half the doublings of the plain
/// method. This holds only on G2 (ψ is multiplication by λ only there), so the generic
/// `multiplied(by:)` remains the one for arbitrary points of the twist.
///
/// Constant-time in k: the split is fixed-length arithmetic with a masked correction, the two
/// window tables are scanned in full, and the schedule (32 windows) is fixed.
enum G2GLS {
    /// λ = 6u².
    static let lambda = G2Point.traceMinusOne
    /// ⌊2^256 / λ⌋ (130 bits), so that ⌊k·g/2^256⌋ is ⌊k/λ⌋ or one less for every k < 2^256.
    static let reciprocal = UInt256(0xb1b2f0c318cd32f3, 0xaaaaaaaa5aa91bea, 0x2, 0)
    /// Windows of 4 bits covering 128 bits.
    static let windows = 32

    /// (k0, k1) with k ≡ k1·λ + k0 (mod r), 0 ≤ k0 < λ, k1 < 2^127.
    static func split(_ scalar: UInt256) -> (UInt256, UInt256) {
        let k = Fr(scalar).value
        var k1 = k.multipliedFullWidth(by: reciprocal).high
        var k0 = k.subtractingWithBorrow(k1.multipliedLow(by: lambda)).0
        // The estimate is at most one short: subtract λ once more where k0 ≥ λ.
        let (d, borrow) = k0.subtractingWithBorrow(lambda)
        let fits = borrow &- 1 // all-ones when k0 ≥ λ
        k0 = UInt256.select(fits, d, k0)
        k1 = k1.addingWithCarry(UInt256(fits & 1)).0
        return (k0, k1)
    }
}

extension ProjectivePoint where C == BN254G2Curve {
    /// k·Q for a secret scalar (any 256-bit value) and Q **in G2** (the generator, or a point
    /// decoded with the subgroup check): the ψ split of `G2GLS`, two 4-bit window tables (Q's
    /// multiples and their images under ψ) scanned in full, 32 windows of 4 doublings and
    /// 2 additions. Equal to `multiplied(by:)` on G2; wrong outside it.
    public func multipliedInG2(by k: UInt256) -> G2Point {
        let (k0, k1) = G2GLS.split(k)
        let t0 = FixedTable16<G2Point>(multiplesOf: self)
        var t1 = t0
        for i in 1..<16 { t1[i] = t0[i].psi } // ψ(i·Q) = i·ψ(Q)
        var acc = G2Point.infinity
        for window in stride(from: G2GLS.windows - 1, through: 0, by: -1) {
            acc = acc.doubled.doubled.doubled.doubled
            acc = acc + t0.select(k0.bits(at: 4 * window, width: 4))
            acc = acc + t1.select(k1.bits(at: 4 * window, width: 4))
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
            let table = FixedTable16<G2Point>(multiplesOf: base)
            rows.append(table)
            base = table[15] + base // 16·base
        }
        self.rows = rows
    }
}

extension ProjectivePoint where C == BN254G2Curve {
    /// k·Q for the G2 generator Q and a secret scalar (any 256-bit value), from the
    /// precomputed tables of `G2GeneratorTable`. Equal to `generator.multiplied(by: k)`.
    public static func generatorMultiple(_ k: UInt256) -> G2Point {
        let rows = G2GeneratorTable.shared.rows
        var acc = G2Point.infinity
        for i in 0..<64 {
            acc = acc + rows[i].select(k.bits(at: 4 * i, width: 4))
        }
        return acc
    }
}
