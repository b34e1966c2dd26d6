/// The constants of a prime modulus below 2^255 for Montgomery arithmetic with R = 2^256.
public protocol MontgomeryModulus: Sendable {
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
public struct PrimeFieldElement<M: MontgomeryModulus>: Sendable {
    /// Montgomery representation, always fully reduced (< m).
    @usableFromInline var mont: UInt256

    @inlinable init(mont: UInt256) { self.mont = mont }

    public static var zero: Self { Self(mont: .zero) }
    public static var one: Self { Self(mont: M.rModM) }

    /// The element equal to `value mod m`. `value` may be any 256-bit integer.
    @inlinable
    public init(_ value: UInt256) {
        // Both moduli lie in [2^253, 2^254), so value < 2^256 < 8m: subtracting 4m, 2m and m
        // where they fit leaves value mod m, then montMul(v, R^2) = v·R mod m.
        var v = value
        let m1 = M.modulus
        let m2 = m1.addingWithCarry(m1).0
        let m4 = m2.addingWithCarry(m2).0
        @inline(__always) func subtractIfFits(_ k: UInt256) {
            let (d, borrow) = v.subtractingWithBorrow(k)
            v = UInt256.select(0 &- borrow, v, d)
        }
        subtractIfFits(m4); subtractIfFits(m2); subtractIfFits(m1)
        self.init(mont: Self.montMul(v, M.r2ModM))
    }

    @inlinable
    public init(_ small: UInt64) { self.init(UInt256(small)) }

    /// Reads 32 big-endian bytes and requires the value to be canonical (< m).
    public init?(canonicalBytes bytes: some Collection<UInt8>) {
        guard let v = UInt256(bigEndian: bytes), v.lessThanMask(M.modulus) != 0 else { return nil }
        self.init(v)
    }

    /// The canonical integer in [0, m).
    @inlinable
    public var value: UInt256 { Self.montMul(mont, UInt256(1)) }

    /// 32 big-endian bytes of the canonical integer.
    public var bytes: [UInt8] { value.bigEndianBytes }

    @inlinable public var isZero: Bool { mont.isZero }
    @inlinable public var isZeroMask: UInt64 { mont.isZeroMask }

    /// All-ones when equal, else 0. Constant-time.
    @inlinable @inline(__always)
    public func equalMask(_ o: Self) -> UInt64 { mont.equalMask(o.mont) }

    /// Constant-time equality.
    @inlinable
    public static func == (a: Self, b: Self) -> Bool { a.equalMask(b) != 0 }

    // MARK: Montgomery multiplication

    /// a·b·R^-1 mod m for a, b < m, by CIOS with 64x64->128-bit products.
    /// The "no carry" variant applies because the top limb of m is below 2^63 - 1
    /// (after gnark-crypto's note on CIOS for moduli with a spare top bit).
    @inlinable @inline(__always)
    static func montMul(_ a: UInt256, _ b: UInt256) -> UInt256 {
        let m = M.modulus
        let inv = M.negInverse
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0
        var carryA: UInt64 = 0, carryC: UInt64 = 0

        @inline(__always) func round(_ bi: UInt64) {
            // t += a·bi
            var (hi, lo) = a.w0.multipliedFullWidth(by: bi)
            (t0, carryA) = mac(lo, hi, t0, 0)
            // m·q with q chosen so that the low limb cancels
            let q = t0 &* inv
            (hi, lo) = m.w0.multipliedFullWidth(by: q)
            (_, carryC) = mac(lo, hi, t0, 0)

            (hi, lo) = a.w1.multipliedFullWidth(by: bi)
            (t1, carryA) = mac(lo, hi, t1, carryA)
            (hi, lo) = m.w1.multipliedFullWidth(by: q)
            (t0, carryC) = mac(lo, hi, t1, carryC)

            (hi, lo) = a.w2.multipliedFullWidth(by: bi)
            (t2, carryA) = mac(lo, hi, t2, carryA)
            (hi, lo) = m.w2.multipliedFullWidth(by: q)
            (t1, carryC) = mac(lo, hi, t2, carryC)

            (hi, lo) = a.w3.multipliedFullWidth(by: bi)
            (t3, carryA) = mac(lo, hi, t3, carryA)
            (hi, lo) = m.w3.multipliedFullWidth(by: q)
            (t2, carryC) = mac(lo, hi, t3, carryC)

            t3 = carryC &+ carryA
        }
        round(b.w0); round(b.w1); round(b.w2); round(b.w3)
        return reduceOnce(UInt256(t0, t1, t2, t3))
    }

    /// hi:lo + x + carry, returned as (low word, high word). It cannot overflow:
    /// (2^64−1)² + 2(2^64−1) < 2^128. Branch-free.
    @inlinable @inline(__always)
    static func mac(_ lo: UInt64, _ hi: UInt64, _ x: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let (s1, o1) = lo.addingReportingOverflow(x)
        let (s2, o2) = s1.addingReportingOverflow(carry)
        return (s2, hi &+ o1.bit &+ o2.bit)
    }

    /// v - m if v >= m, else v. v < 2m. Constant-time.
    @inlinable @inline(__always)
    static func reduceOnce(_ v: UInt256) -> UInt256 {
        let (d, borrow) = v.subtractingWithBorrow(M.modulus)
        return UInt256.select(0 &- borrow, v, d)
    }

    // MARK: Ring operations

    @inlinable @inline(__always)
    public static func + (a: Self, b: Self) -> Self {
        // a + b < 2m < 2^256 because m < 2^255.
        let (s, _) = a.mont.addingWithCarry(b.mont)
        return Self(mont: reduceOnce(s))
    }

    @inlinable @inline(__always)
    public static func - (a: Self, b: Self) -> Self {
        let (d, borrow) = a.mont.subtractingWithBorrow(b.mont)
        let (fixed, _) = d.addingWithCarry(UInt256.select(0 &- borrow, M.modulus, .zero))
        return Self(mont: fixed)
    }

    @inlinable @inline(__always)
    public static prefix func - (a: Self) -> Self { zero - a }

    @inlinable @inline(__always)
    public static func * (a: Self, b: Self) -> Self { Self(mont: montMul(a.mont, b.mont)) }

    @inlinable @inline(__always)
    public var squared: Self { self * self }
    @inlinable @inline(__always)
    public var doubled: Self { self + self }

    /// self^e for a public or secret exponent; the sequence of operations depends only on the
    /// bit length of the modulus, never on e (square-and-multiply-always with selection).
    public func power(_ e: UInt256) -> Self {
        var result = Self.one
        for i in stride(from: 255, through: 0, by: -1) {
            result = result.squared
            let product = result * self
            result = Self.select(0 &- e.bit(i), product, result)
        }
        return result
    }

    /// self^e for a public exponent: square-and-multiply on e's bits. The operations depend
    /// on e only, so this is constant-time in `self` (used with fixed exponents on secrets).
    public func power(publicExponent e: UInt256) -> Self {
        var result = self
        var i = e.bitLength - 2
        if i < -1 { return .one }
        while i >= 0 {
            result = result.squared
            if e.bit(i) == 1 { result = result * self }
            i -= 1
        }
        return result
    }

    /// self^-1, or 0 for 0. Constant-time in self (Fermat: self^(m-2), a fixed exponent).
    public var inverse: Self {
        let (e, _) = M.modulus.subtractingWithBorrow(UInt256(2))
        return power(publicExponent: e)
    }

    /// `mask` all-ones selects `a`, zero selects `b`.
    @inlinable @inline(__always)
    public static func select(_ mask: UInt64, _ a: Self, _ b: Self) -> Self {
        Self(mont: UInt256.select(mask, a.mont, b.mont))
    }

    /// Whether the canonical value is odd, as 0 or 1.
    @inlinable
    public var parity: UInt64 { value.w0 & 1 }
}

/// BN254CX base field modulus p.
public enum BN254FieldModulus: MontgomeryModulus {
    public static let modulus = UInt256(0xbe6623ef5c1b55b3, 0x243fd6ee18093ee1, 0xb0bddf647a6366d3, 0x2400000008702a0d)
    public static let negInverse: UInt64 = 0xef4e205bf9789e85
    public static let rModM = UInt256(0xcb3504747b40a81b, 0x02411f7d57bf47d3, 0x2acee440a748303a, 0x03ffffffc4eed9a0)
    public static let r2ModM = UInt256(0x1ab56897efb9b4e3, 0xa691c0713a431a9c, 0xb09d24432010d99d, 0x0984f9877b265a33)
}

/// BN254CX group order r (the scalar field).
public enum BN254ScalarModulus: MontgomeryModulus {
    public static let modulus = UInt256(0xbe11c0a636eb1f6d, 0xc43fd6ee0cc906ce, 0xb0bddf647a6366d2, 0x2400000008702a0d)
    public static let negInverse: UInt64 = 0x77a1aafa9a633d9b
    public static let rModM = UInt256(0xcd83bb747f922405, 0xa2411f7da680d058, 0x2acee440a748303c, 0x03ffffffc4eed9a0)
    public static let r2ModM = UInt256(0x7c882d12fb96bfae, 0xa28f033a656fa449, 0xfac7856946c17599, 0x104e0b77e15d4cd6)
}

/// The base field Fp of BN254CX.
public typealias Fp = PrimeFieldElement<BN254FieldModulus>
/// The scalar field Fr of BN254CX (integers modulo the group order r).
public typealias Fr = PrimeFieldElement<BN254ScalarModulus>

extension PrimeFieldElement where M == BN254FieldModulus {
    /// A square root for p ≡ 3 (mod 4): self^((p+1)/4), and whether it is one.
    /// Used on public data only (hash to curve, point decompression).
    func squareRoot() -> (root: Fp, isSquare: Bool) {
        let (pPlus1, _) = M.modulus.addingWithCarry(UInt256(1))
        let root = power(publicExponent: pPlus1.shiftedRight1.shiftedRight1)
        return (root, root.squared == self)
    }
}
