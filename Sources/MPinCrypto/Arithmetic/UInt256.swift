/// A 256-bit unsigned integer as four little-endian 64-bit limbs.
///
/// It is the storage of every field element and scalar. All operations here run in time
/// independent of the values (no data-dependent branches), unless their name says otherwise.
public struct UInt256: Sendable, Hashable {
    public var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    @inlinable
    public init(_ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        self.w0 = w0; self.w1 = w1; self.w2 = w2; self.w3 = w3
    }

    public static let zero = UInt256(0, 0, 0, 0)

    /// The value of a small integer.
    @inlinable
    public init(_ small: UInt64) { self.init(small, 0, 0, 0) }

    /// Reads exactly 32 big-endian bytes. Returns nil for any other length.
    public init?<B: Collection<UInt8>>(bigEndian bytes: B) {
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
    public init?(hex: String) {
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
    public var bigEndianBytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        writeBigEndian(into: &out, at: 0)
        return out
    }

    /// Writes 32 big-endian bytes at `offset`.
    public func writeBigEndian(into out: inout [UInt8], at offset: Int) {
        let ws = [w3, w2, w1, w0]
        for (k, w) in ws.enumerated() {
            for b in 0..<8 { out[offset + 8 * k + b] = UInt8(truncatingIfNeeded: w >> (56 - 8 * UInt64(b))) }
        }
    }

    /// Bit `i` (0 = least significant) as 0 or 1.
    @inlinable
    public func bit(_ i: Int) -> UInt64 {
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
    public func bits(at i: Int, width: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<width { v |= bit(i + k) << UInt64(k) }
        return v
    }

    /// Number of significant bits. Not constant-time: for public values only.
    public var bitLength: Int {
        if w3 != 0 { return 256 - w3.leadingZeroBitCount }
        if w2 != 0 { return 192 - w2.leadingZeroBitCount }
        if w1 != 0 { return 128 - w1.leadingZeroBitCount }
        if w0 != 0 { return 64 - w0.leadingZeroBitCount }
        return 0
    }

    /// All-ones if zero, else 0. Constant-time.
    @inlinable @inline(__always)
    public var isZeroMask: UInt64 {
        let any = w0 | w1 | w2 | w3
        // (any | -any) has its top bit set exactly when any != 0.
        return ((any | (0 &- any)) >> 63) &- 1
    }

    @inlinable
    public var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }

    /// self + other, and the carry out (0 or 1).
    @inlinable @inline(__always)
    public func addingWithCarry(_ o: UInt256) -> (UInt256, UInt64) {
        let (r0, c0) = w0.addingReportingOverflow(o.w0)
        let (s1, c1a) = w1.addingReportingOverflow(o.w1)
        let (r1, c1b) = s1.addingReportingOverflow(c0 ? 1 : 0)
        let (s2, c2a) = w2.addingReportingOverflow(o.w2)
        let (r2, c2b) = s2.addingReportingOverflow((c1a || c1b) ? 1 : 0)
        let (s3, c3a) = w3.addingReportingOverflow(o.w3)
        let (r3, c3b) = s3.addingReportingOverflow((c2a || c2b) ? 1 : 0)
        return (UInt256(r0, r1, r2, r3), (c3a || c3b) ? 1 : 0)
    }

    /// self - other, and the borrow out (0 or 1).
    @inlinable @inline(__always)
    public func subtractingWithBorrow(_ o: UInt256) -> (UInt256, UInt64) {
        let (r0, b0) = w0.subtractingReportingOverflow(o.w0)
        let (s1, b1a) = w1.subtractingReportingOverflow(o.w1)
        let (r1, b1b) = s1.subtractingReportingOverflow(b0 ? 1 : 0)
        let (s2, b2a) = w2.subtractingReportingOverflow(o.w2)
        let (r2, b2b) = s2.subtractingReportingOverflow((b1a || b1b) ? 1 : 0)
        let (s3, b3a) = w3.subtractingReportingOverflow(o.w3)
        let (r3, b3b) = s3.subtractingReportingOverflow((b2a || b2b) ? 1 : 0)
        return (UInt256(r0, r1, r2, r3), (b3a || b3b) ? 1 : 0)
    }

    /// `mask` all-ones selects `a`, zero selects `b`. Constant-time.
    @inlinable @inline(__always)
    public static func select(_ mask: UInt64, _ a: UInt256, _ b: UInt256) -> UInt256 {
        UInt256(b.w0 ^ (mask & (a.w0 ^ b.w0)), b.w1 ^ (mask & (a.w1 ^ b.w1)),
                b.w2 ^ (mask & (a.w2 ^ b.w2)), b.w3 ^ (mask & (a.w3 ^ b.w3)))
    }

    /// self >> 1.
    @inlinable
    public var shiftedRight1: UInt256 {
        UInt256(w0 >> 1 | w1 << 63, w1 >> 1 | w2 << 63, w2 >> 1 | w3 << 63, w3 >> 1)
    }

    /// Constant-time `self < other`, as a mask.
    @inlinable
    public func lessThanMask(_ o: UInt256) -> UInt64 {
        let (_, borrow) = subtractingWithBorrow(o)
        return 0 &- borrow
    }
}
