import CValueBarrier

/// A 256-bit unsigned integer as four little-endian 64-bit limbs.
///
/// It is the storage of every field element and scalar. All operations here run in time
/// independent of the values (no data-dependent branches), unless their name says otherwise.
///
/// Equality (`==`, `equalMask`) is constant-time: it reads all four limbs whatever they hold,
/// rather than the synthesized `Equatable`, which stops at the first limb that differs.
/// Not `Hashable`: nothing needs it, and hashing a secret is one more place it could leak.
package struct UInt256: Sendable, Equatable {
    package var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    @inlinable
    package init(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        self.w0 = w0; self.w1 = w1; self.w2 = w2; self.w3 = w3
    }

    package static let zero = UInt256(0, 0, 0, 0)

    /// The value of a small integer.
    @inlinable
    package init(_ small: UInt64) { self.init(small, 0, 0, 0) }

    /// Reads exactly 32 big-endian bytes. Returns nil for any other length.
    package init?<B: Collection<UInt8>>(bigEndian bytes: B) {
        guard bytes.count == 32 else { return nil }
        var limbs: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var i = 0
        for byte in bytes {
            // byte i (from the most significant end) belongs to limb 3 - i/8.
            let v = UInt64(byte)
            switch i >> 3 {
            case 0: limbs.3 = limbs.3 << 8 | v
            case 1: limbs.2 = limbs.2 << 8 | v
            case 2: limbs.1 = limbs.1 << 8 | v
            default: limbs.0 = limbs.0 << 8 | v
            }
            i += 1
        }
        self.init(limbs.0, limbs.1, limbs.2, limbs.3)
    }

    /// Parses a big-endian hexadecimal string of at most 64 digits (no prefix). Not constant-time:
    /// for constants and test data.
    package init?(hex: String) {
        let digits = Array(hex.utf8)
        guard !digits.isEmpty, digits.count <= 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        var nibbles = [UInt8]()
        nibbles.reserveCapacity(64)
        for c in digits {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(c - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        let padded = [UInt8](repeating: 0, count: 64 - nibbles.count) + nibbles
        for i in 0..<32 { bytes[i] = padded[2 * i] << 4 | padded[2 * i + 1] }
        self.init(bigEndian: bytes)
    }

    /// 32 big-endian bytes, leading zeros kept.
    package var bigEndianBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        writeBigEndian(into: &out, at: 0)
        return out
    }

    /// Writes 32 big-endian bytes at `offset`.
    package func writeBigEndian(into out: inout [UInt8], at offset: Int) {
        let ws = [w3, w2, w1, w0]
        for (k, w) in ws.enumerated() {
            for b in 0..<8 { out[offset + 8 * k + b] = UInt8(truncatingIfNeeded: w >> (56 - 8 * UInt64(b))) }
        }
    }

    /// Bit `i` (0 = least significant) as 0 or 1.
    @inlinable
    package func bit(_ i: Int) -> UInt64 {
        let limb: UInt64
        switch i >> 6 {
        case 0: limb = w0
        case 1: limb = w1
        case 2: limb = w2
        case 3: limb = w3
        default: return 0
        }
        return (limb >> UInt64(i & 63)) & 1
    }

    /// `width` bits starting at bit `i` (width <= 8), for fixed-window methods. The position is
    /// public; only the value read is secret.
    @inlinable
    package func bits(at i: Int, width: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<width { v |= bit(i + k) << UInt64(k) }
        return v
    }

    /// Number of significant bits. Not constant-time: for public values only.
    package var bitLength: Int {
        if w3 != 0 { return 256 - w3.leadingZeroBitCount }
        if w2 != 0 { return 192 - w2.leadingZeroBitCount }
        if w1 != 0 { return 128 - w1.leadingZeroBitCount }
        if w0 != 0 { return 64 - w0.leadingZeroBitCount }
        return 0
    }

    /// All-ones if zero, else 0. Constant-time.
    @inlinable @inline(__always)
    package var isZeroMask: UInt64 {
        Mask.equal(w0 | w1 | w2 | w3, 0)
    }

    @inlinable
    package var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }

    /// All-ones if `self == other`, else 0. Constant-time: the limbs' differences are OR-ed
    /// together and tested once.
    @inlinable @inline(__always)
    package func equalMask(_ o: UInt256) -> UInt64 {
        UInt256(w0 ^ o.w0, w1 ^ o.w1, w2 ^ o.w2, w3 ^ o.w3).isZeroMask
    }

    /// Constant-time equality (see the type's description).
    @inlinable
    package static func == (a: UInt256, b: UInt256) -> Bool { a.equalMask(b) != 0 }

    /// self + other, and the carry out (0 or 1). Branch-free: a Bool carry would compile to
    /// conditional jumps, which are both slow and secret-dependent.
    @inlinable @inline(__always)
    package func addingWithCarry(_ o: UInt256) -> (UInt256, UInt64) {
        let (r0, c0) = addCarry(w0, o.w0, 0)
        let (r1, c1) = addCarry(w1, o.w1, c0)
        let (r2, c2) = addCarry(w2, o.w2, c1)
        let (r3, c3) = addCarry(w3, o.w3, c2)
        return (UInt256(r0, r1, r2, r3), c3)
    }

    /// self - other, and the borrow out (0 or 1). Branch-free, as `addingWithCarry`.
    @inlinable @inline(__always)
    package func subtractingWithBorrow(_ o: UInt256) -> (UInt256, UInt64) {
        let (r0, b0) = subBorrow(w0, o.w0, 0)
        let (r1, b1) = subBorrow(w1, o.w1, b0)
        let (r2, b2) = subBorrow(w2, o.w2, b1)
        let (r3, b3) = subBorrow(w3, o.w3, b2)
        return (UInt256(r0, r1, r2, r3), b3)
    }

    /// `mask` all-ones selects `a`, zero selects `b`. Constant-time: the mask passes the value
    /// barrier first, so the optimiser cannot turn the selection back into a branch.
    @inlinable @inline(__always)
    package static func select(_ mask: UInt64, _ a: UInt256, _ b: UInt256) -> UInt256 {
        let mask = valueBarrier(mask)
        return UInt256(b.w0 ^ (mask & (a.w0 ^ b.w0)), b.w1 ^ (mask & (a.w1 ^ b.w1)),
                       b.w2 ^ (mask & (a.w2 ^ b.w2)), b.w3 ^ (mask & (a.w3 ^ b.w3)))
    }

    /// self − m when self ≥ m, else self. Constant-time and out of the optimiser's reach:
    /// CValueBarrier's `mpin_subtract_if_fits4` (subtraction and cmovc in one asm statement on
    /// x86-64; a barrier-guarded mask elsewhere). The hot path of every modular addition and
    /// multiplication, where a masked selection would cost eight more instructions.
    @inlinable @inline(__always)
    package func subtractingIfFits(_ m: UInt256) -> UInt256 {
        let r = mpin_subtract_if_fits4(mpin_limbs4(w0: w0, w1: w1, w2: w2, w3: w3),
                                       mpin_limbs4(w0: m.w0, w1: m.w1, w2: m.w2, w3: m.w3))
        return UInt256(r.w0, r.w1, r.w2, r.w3)
    }

    /// self >> 1.
    @inlinable
    package var shiftedRight1: UInt256 {
        UInt256(w0 >> 1 | w1 << 63, w1 >> 1 | w2 << 63, w2 >> 1 | w3 << 63, w3 >> 1)
    }

    /// Constant-time `self < other`, as a mask.
    @inlinable
    package func lessThanMask(_ o: UInt256) -> UInt64 {
        let (_, borrow) = subtractingWithBorrow(o)
        return Mask.ofBit(borrow)
    }
}

/// a + b + carry (carry 0 or 1): the low word and the carry out. The overflow flags become
/// integers without a branch (at most one of the two additions can overflow).
@inlinable @inline(__always)
func addCarry(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
    let (s1, o1) = a.addingReportingOverflow(b)
    let (s2, o2) = s1.addingReportingOverflow(carry)
    return (s2, o1.bit | o2.bit)
}

/// a − b − borrow (borrow 0 or 1): the low word and the borrow out, branch-free.
@inlinable @inline(__always)
func subBorrow(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
    let (d1, o1) = a.subtractingReportingOverflow(b)
    let (d2, o2) = d1.subtractingReportingOverflow(borrow)
    return (d2, o1.bit | o2.bit)
}

extension Bool {
    /// 0 or 1, reinterpreting the stored byte: never compiled to a branch, unlike `b ? 1 : 0`
    /// or `||`, which can be.
    @inlinable @inline(__always)
    var bit: UInt64 { UInt64(unsafeBitCast(self, to: UInt8.self)) }
}

extension UInt256 {
    /// The full 512-bit product as (high, low) halves, by schoolbook multiplication.
    /// Constant-time: the same instructions for every operand.
    package func multipliedFullWidth(by o: UInt256) -> (high: UInt256, low: UInt256) {
        var r: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &r) { raw in
            let acc = raw.bindMemory(to: UInt64.self)
            for i in 0..<4 {
                var carry: UInt64 = 0
                for j in 0..<4 {
                    let (hi, lo) = limb(i).multipliedFullWidth(by: o.limb(j))
                    let (s1, c1) = addCarry(lo, acc[i + j], 0)
                    let (s2, c2) = addCarry(s1, carry, 0)
                    acc[i + j] = s2
                    carry = hi &+ c1 &+ c2
                }
                acc[i + 4] = carry
            }
        }
        return (UInt256(r.4, r.5, r.6, r.7), UInt256(r.0, r.1, r.2, r.3))
    }

    /// Limb i (0 = least significant); i is a public position.
    @inlinable
    func limb(_ i: Int) -> UInt64 {
        switch i {
        case 0: w0
        case 1: w1
        case 2: w2
        default: w3
        }
    }

    /// The low 256 bits of self · o (wrapping).
    package func multipliedLow(by o: UInt256) -> UInt256 { multipliedFullWidth(by: o).low }

    /// Two's-complement negation modulo 2^256.
    package var negatedWrapping: UInt256 { UInt256.zero.subtractingWithBorrow(self).0 }
}
