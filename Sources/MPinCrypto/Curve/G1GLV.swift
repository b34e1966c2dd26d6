/// Scalar multiplication in G1 with the GLV endomorphism φ(x, y) = (βx, y) = λ·(x, y),
/// β³ = 1 in Fp, λ² + λ + 1 = 0 mod r (Gallant, Lambert and Vanstone, CRYPTO 2001).
/// k is split into k1 + k2·λ with |k1|, |k2| < 2^128, which halves the doublings.
/// Everything here is constant-time in k: the split is fixed-length arithmetic, the signs are
/// applied by masked selection, and the joint multiplication has a fixed schedule.
enum G1GLV {
    /// β, a primitive cube root of unity in Fp (docs/CRYPTO.md §1), matching λ below.
    static let beta = Fp(UInt256(0x31e0931794235c97, 0x40bddf6471ef8756, 0x480000000ca83f14, 0))
    // Reduced lattice basis of {(a, b) : a + b·λ ≡ 0 mod r}: v1 = (a1, −|b1|), v2 = (a2, b2).
    static let a1 = UInt256(0x8000000007802561, 0, 0, 0)
    static let a2 = UInt256(0x805463491db010e4, 0x600000000b403812, 0, 0)
    static let b1Magnitude = UInt256(0x00546349162feb83, 0x600000000b403812, 0, 0)
    static let b2 = UInt256(0x8000000007802561, 0, 0, 0)
    /// ⌊2^256·b2/r⌋ and ⌊2^256·|b1|/r⌋, so that c1 = ⌊k·g1/2^256⌋ ≈ k·b2/r, c2 ≈ k·|b1|/r.
    static let g1 = UInt256(0x8e38e38d98e070c0, 0x0000000000000003, 0, 0)
    static let g2 = UInt256(0x3febd450b1ada3ac, 0xaaaaaaaa5aa91bee, 0x0000000000000002, 0)
    /// Signed 4-bit digits of a split value (below 2^128): 32 digits in [−8, 7] and a top
    /// digit 0 or 1.
    static let windows = 33
    /// 8·(1 + 16 + ⋯ + 16^31). For k < 2^128, the 4-bit windows w_i of k + offset give k's
    /// signed digits: w_i − 8 for i < 32, and w_32 (0 or 1) on top, since
    /// k = Σ_{i<32} (w_i − 8)·16^i + w_32·16^32. No carry to propagate, so the digits can be read
    /// from the top down, in fixed time. (The usual offset form of signed-window recoding.)
    static let signedOffset = UInt256(0x8888_8888_8888_8888, 0x8888_8888_8888_8888, 0, 0)

    /// (|k1|, k1 < 0 mask, |k2|, k2 < 0 mask) with k ≡ k1 + k2·λ (mod r).
    static func split(_ scalar: UInt256) -> (UInt256, UInt64, UInt256, UInt64) {
        let k = Fr(scalar).value
        let c1 = k.multipliedFullWidth(by: g1).high
        let c2 = k.multipliedFullWidth(by: g2).high
        // k1 = k − c1·a1 − c2·a2 and k2 = c1·|b1| − c2·b2, in 256-bit two's complement.
        let k1 = k.subtractingWithBorrow(c1.multipliedLow(by: a1)).0
            .subtractingWithBorrow(c2.multipliedLow(by: a2)).0
        let k2 = c1.multipliedLow(by: b1Magnitude).subtractingWithBorrow(c2.multipliedLow(by: b2)).0
        let n1 = Mask.ofSign(k1.w3), n2 = Mask.ofSign(k2.w3)
        return (UInt256.select(n1, k1.negatedWrapping, k1), n1, UInt256.select(n2, k2.negatedWrapping, k2), n2)
    }
}

extension ProjectivePoint where C == BN254G1Curve {
    /// k·P for a secret scalar (any 256-bit value) with the GLV split and signed 4-bit digits:
    /// two tables of 0·P ... 8·P (for ±P and ±φ(P)) scanned in full, the sign applied by
    /// masked negation, 33 windows of 4 doublings and 2 additions. Signed digits halve the
    /// tables (8 multiples to build instead of 15, 9 entries to scan instead of 16).
    package func multiplied(by k: UInt256) -> G1Point {
        let (k1, neg1, k2, neg2) = G1GLV.split(k)
        let p1 = G1Point.select(neg1, -self, self)
        let phi = G1Point(x: x * G1GLV.beta, y: y, z: z)
        let p2 = G1Point.select(neg2, -phi, phi)
        var t1 = FixedTable16<G1Point>(multiplesOf: p1, through: 8)
        var t2 = FixedTable16<G1Point>(multiplesOf: p2, through: 8)
        let r1 = k1.addingWithCarry(G1GLV.signedOffset).0
        let r2 = k2.addingWithCarry(G1GLV.signedOffset).0
        // The top window holds the digit itself (0 or 1), hence the bias of 8; it starts the
        // sum, which saves the four doublings of the point at infinity a first round would do.
        let top = G1GLV.windows - 1
        var acc = t1.selectSigned(r1.bits(at: 4 * top, width: 4) &+ 8)
            + t2.selectSigned(r2.bits(at: 4 * top, width: 4) &+ 8)
        for window in stride(from: top - 1, through: 0, by: -1) {
            acc = acc.doubled.doubled.doubled.doubled
            // Digit + 8, in [0, 16].
            acc = acc + t1.selectSigned(r1.bits(at: 4 * window, width: 4))
            acc = acc + t2.selectSigned(r2.bits(at: 4 * window, width: 4))
        }
        return acc
    }
}
