/// A short Weierstrass curve y² = x³ + b over a field `F` (a = 0).
package protocol WeierstrassCurve: Sendable {
    associatedtype F: FieldArithmetic
    /// The constant b.
    static var b: F { get }
    /// 3·b·x, used by the complete addition formulas; curves implement it with additions.
    static func timesB3(_ x: F) -> F
    /// Whether `ProjectivePoint.doubled` should trade two multiplications for two squarings
    /// (worth it where a squaring is cheaper than a product, as over Fp2).
    static var doublesBySquaring: Bool { get }
}

extension WeierstrassCurve {
    package static var doublesBySquaring: Bool { false }
}

/// A point in homogeneous projective coordinates (X : Y : Z), x = X/Z, y = Y/Z.
/// The point at infinity is (0 : 1 : 0).
///
/// Addition and doubling use the complete formulas of Renes, Costello and Batina,
/// "Complete addition formulas for prime order elliptic curves" (2016), algorithms 7 and 9
/// for a = 0. They have no exceptional cases (doubling, infinity, inverses), so the
/// sequence of field operations never depends on the points: constant-time by construction.
/// They are complete on curves of odd order, which both E(Fp) and the twist E'(Fp2) are.
package struct ProjectivePoint<C: WeierstrassCurve>: Sendable {
    package typealias F = C.F
    package var x: F
    package var y: F
    package var z: F

    @inlinable
    package init(x: F, y: F, z: F) { self.x = x; self.y = y; self.z = z }

    /// The affine point (x, y). The caller must know it is on the curve.
    @inlinable
    package init(affineX x: F, y: F) { self.init(x: x, y: y, z: .one) }

    package static var infinity: Self { Self(x: .zero, y: .one, z: .zero) }

    /// All-ones when this is the point at infinity.
    @inlinable
    package var isInfinityMask: UInt64 { z.isZeroMask }
    package var isInfinity: Bool { isInfinityMask != 0 }

    /// Complete addition (RCB algorithm 7): 12 multiplications, 2 by 3b.
    @inlinable
    package static func + (p: Self, q: Self) -> Self {
        var t0 = p.x * q.x
        var t1 = p.y * q.y
        var t2 = p.z * q.z
        var t3 = (p.x + p.y) * (q.x + q.y)
        var t4 = t0 + t1
        t3 = t3 - t4
        t4 = (p.y + p.z) * (q.y + q.z)
        var x3 = t1 + t2
        t4 = t4 - x3
        x3 = (p.x + p.z) * (q.x + q.z)
        var y3 = t0 + t2
        y3 = x3 - y3
        x3 = t0 + t0
        t0 = x3 + t0
        t2 = C.timesB3(t2)
        var z3 = t1 + t2
        t1 = t1 - t2
        y3 = C.timesB3(y3)
        x3 = t4 * y3
        t2 = t3 * t1
        x3 = t2 - x3
        y3 = y3 * t0
        t1 = t1 * z3
        y3 = t1 + y3
        t0 = t0 * t3
        z3 = z3 * t4
        z3 = z3 + t0
        return Self(x: x3, y: y3, z: z3)
    }

    /// Complete doubling (RCB algorithm 9): X3 = 2XY(Y² − 3t), Y3 = (Y² − 3t)(Y² + t) + 8tY²,
    /// Z3 = 8Y²·YZ with t = 3bZ². Where squarings are cheaper than multiplications
    /// (`WeierstrassCurve.doublesBySquaring`, the twist over Fp2) the same coordinates are
    /// computed with more squarings.
    @inlinable
    package var doubled: Self { C.doublesBySquaring ? doubledBySquaring : doubledRCB }

    /// RCB algorithm 9 as published: 6 multiplications, 2 squarings, 1 by 3b.
    @inlinable @inline(__always)
    var doubledRCB: Self {
        var t0 = y.squared
        var z3 = t0 + t0
        z3 = z3 + z3
        z3 = z3 + z3
        var t1 = y * z
        var t2 = z.squared
        t2 = C.timesB3(t2)
        var x3 = t2 * z3
        var y3 = t0 + t2
        z3 = t1 * z3
        t1 = t2 + t2
        t2 = t1 + t2
        t0 = t0 - t2
        y3 = t0 * y3
        y3 = x3 + y3
        t1 = x * y
        x3 = t0 * t1
        x3 = x3 + x3
        return Self(x: x3, y: y3, z: z3)
    }

    /// The same coordinates as the Miller loop's doubling step computes them
    /// (`Pairing.doublingStep`), with Y3 = (Y² + 3t)² − 12t²: 4 multiplications and 4 squarings
    /// instead of 6 and 2, a saving over Fp2, where a squaring costs two Fp products and a
    /// multiplication three (over Fp the extra additions make it slower).
    @inlinable @inline(__always)
    var doubledBySquaring: Self {
        let yz = y * z
        let y2 = y.squared
        let t = C.timesB3(z.squared)
        let t3 = t.doubled + t
        let tt = t.squared
        let x3 = ((x * y) * (y2 - t3)).doubled
        let y3 = (y2 + t3).squared - (tt.doubled + tt).doubled.doubled
        let z3 = (y2 * yz).doubled.doubled.doubled
        return Self(x: x3, y: y3, z: z3)
    }

    @inlinable
    package static prefix func - (p: Self) -> Self { Self(x: p.x, y: -p.y, z: p.z) }

    @inlinable
    package static func - (p: Self, q: Self) -> Self { p + (-q) }

    /// `mask` all-ones selects `a`, zero selects `b`.
    @inlinable @inline(__always)
    package static func select(_ mask: UInt64, _ a: Self, _ b: Self) -> Self {
        Self(x: F.select(mask, a.x, b.x), y: F.select(mask, a.y, b.y), z: F.select(mask, a.z, b.z))
    }

    /// Projective equality: X1·Z2 = X2·Z1 and Y1·Z2 = Y2·Z1 (also right for infinity), so the
    /// same point with different Z compares equal. Constant-time: four multiplications and the
    /// fields' constant-time `equalMask`, whatever the points. (The type does not declare
    /// `Equatable`, so nothing synthesizes a coordinate-by-coordinate `==`, which would be wrong
    /// for projective points as well as variable-time.)
    @_specialize(exported: true, where C == BN254G1Curve)
    @_specialize(exported: true, where C == BN254G2Curve)
    package static func == (p: Self, q: Self) -> Bool {
        let ex = (p.x * q.z).equalMask(q.x * p.z)
        let ey = (p.y * q.z).equalMask(q.y * p.z)
        // Both at infinity, or both finite and equal coordinates.
        let bothInf = p.isInfinityMask & q.isInfinityMask
        let neitherInf = ~p.isInfinityMask & ~q.isInfinityMask
        return (bothInf | (neitherInf & ex & ey)) != 0
    }

    /// The affine coordinates, or nil for the point at infinity. One inversion.
    package var affine: (x: F, y: F)? {
        if isInfinity { return nil }
        let zi = z.inverse
        return (x * zi, y * zi)
    }

    /// Whether the point satisfies Y²Z = X³ + bZ³.
    package var isOnCurve: Bool {
        let lhs = y.squared * z
        let rhs = x.squared * x + C.b * z.squared * z
        return lhs.equalMask(rhs) != 0
    }

    /// k·P for a secret 256-bit scalar, for any point on the curve (also outside the
    /// order-r subgroup): fixed 4-bit windows with a table scanned in full at
    /// every step, so neither the operations nor the memory touched depend on k.
    @_specialize(exported: true, where C == BN254G1Curve)
    @_specialize(exported: true, where C == BN254G2Curve)
    package func multiplied(by k: UInt256) -> Self {
        var table = FixedTable16<Self>(multiplesOf: self)
        var acc = Self.infinity
        for window in stride(from: 63, through: 0, by: -1) {
            acc = acc.doubled.doubled.doubled.doubled
            let digit = k.bits(at: 4 * window, width: 4)
            acc = acc + table.select(digit)
        }
        return acc
    }

    /// k·P for a public scalar k (a curve constant): double-and-add over k's bits. The
    /// operations depend on k only, never on the point.
    @_specialize(where C == BN254G2Curve)
    func multiplied(byPublic k: UInt256) -> Self {
        var acc = Self.infinity
        var i = k.bitLength - 1
        while i >= 0 {
            acc = acc.doubled
            if k.bit(i) == 1 { acc = acc + self }
            i -= 1
        }
        return acc
    }

    /// k·P where k is a small secret of at most `bits` bits (the PIN): a Montgomery ladder of
    /// fixed length with conditional swaps.
    @_specialize(exported: true, where C == BN254G1Curve)
    @_specialize(exported: true, where C == BN254G2Curve)
    package func multiplied(bySmall k: UInt64, bits: Int) -> Self {
        var r0 = Self.infinity
        var r1 = self
        for i in stride(from: bits - 1, through: 0, by: -1) {
            let mask = Mask.ofBit((k >> UInt64(i)) & 1)
            // if bit: (r0, r1) = (r0 + r1, 2·r1) else (2·r0, r0 + r1)
            let sum = r0 + r1
            let dbl = Self.select(mask, r1, r0).doubled
            r0 = Self.select(mask, sum, dbl)
            r1 = Self.select(mask, dbl, sum)
        }
        return r0
    }
}

/// Sixteen values with constant-time lookup: `select` reads every entry.
package struct FixedTable16<T: Sendable>: Sendable {
    @usableFromInline var storage: (T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T)

    @inlinable
    init(repeating v: T) { storage = (v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v) }

    /// Positional access by a public index. The getter is `mutating` only to read the entry
    /// in place (through `&storage`): a plain getter copied the whole table for every read.
    @inlinable
    subscript(i: Int) -> T {
        mutating get { withUnsafeBytes(of: &storage) { $0.assumingMemoryBound(to: T.self)[i] } }
        set { withUnsafeMutableBytes(of: &storage) { $0.assumingMemoryBound(to: T.self)[i] = newValue } }
    }
}

extension FixedTable16 {
    /// The multiples 0·P, 1·P, ..., 15·P.
    @inlinable
    init<C>(multiplesOf p: ProjectivePoint<C>) where T == ProjectivePoint<C> {
        self.init(repeating: .infinity)
        self[1] = p
        for i in 2..<16 { self[i] = (i & 1 == 0) ? self[i / 2].doubled : self[i - 1] + p }
    }

    /// The multiples 0·P, 1·P, ..., n·P (n < 16); the other entries stay at infinity and are
    /// never read by `selectSigned`.
    @inlinable
    init<C>(multiplesOf p: ProjectivePoint<C>, through n: Int) where T == ProjectivePoint<C> {
        self.init(repeating: .infinity)
        self[1] = p
        for i in 2...n { self[i] = (i & 1 == 0) ? self[i / 2].doubled : self[i - 1] + p }
    }

    /// d·P for a secret signed digit d = biased − 8 in [−8, 8], from a table of 0·P ... 8·P:
    /// reads entries 0 to 8 whatever d is, keeps |d|·P by mask and negates it by mask when
    /// d < 0. `mutating` only to read the table in place: `withUnsafeBytes(of:)` on a value
    /// copied the whole table (3 KB for G2, entry by entry) at every lookup, 9 % of a G2
    /// multiplication; through `&storage` it reads the caller's variable. Nothing is written.
    @inlinable
    mutating func selectSigned<C>(_ biased: UInt64) -> T where T == ProjectivePoint<C> {
        let d = biased &- 8
        let negative = Mask.ofSign(d) // all-ones when d < 0
        let magnitude = (d ^ negative) &- negative
        let point: ProjectivePoint<C> = withUnsafeBytes(of: &storage) { raw in
            let entries = raw.assumingMemoryBound(to: T.self)
            var out = ProjectivePoint<C>.infinity
            for i in 0...8 {
                let mask = Mask.equal(UInt64(i), magnitude)
                out = ProjectivePoint<C>.select(mask, entries[i], out)
            }
            return out
        }
        return ProjectivePoint<C>.select(negative, -point, point)
    }

    /// The entry at a secret index, reading all sixteen entries and keeping one by mask.
    /// The storage is read in place (`mutating` for `&storage`, see `selectSigned`; reading it
    /// entry by entry through the subscript copies the tuple at every read).
    @inlinable
    mutating func select<C>(_ index: UInt64) -> T where T == ProjectivePoint<C> {
        withUnsafeBytes(of: &storage) { Self.select(in: $0, index) }
    }

    /// `select` on a table given by its bytes (the generator's tables, read in place in
    /// their array).
    @inlinable
    static func select<C>(in raw: UnsafeRawBufferPointer, _ index: UInt64) -> T where T == ProjectivePoint<C> {
        let entries = raw.assumingMemoryBound(to: T.self)
        var out = ProjectivePoint<C>.infinity
        for i in 0..<16 {
            let mask = Mask.equal(UInt64(i), index)
            out = ProjectivePoint<C>.select(mask, entries[i], out)
        }
        return out
    }
}
