import CValueBarrier

/// `x` unchanged, passed through CValueBarrier's empty asm statement, so that the optimiser
/// cannot know it is a mask (0 or all-ones) and turn a masked selection back into a branch on
/// a secret. It costs no instruction. (The model is fiat-crypto's `value_barrier`, as in the
/// C code swift-crypto vendors.) Every mask the crypto selects with passes through it:
/// `UInt256.select` applies it to the mask it is given, and the helpers below to the masks
/// they return.
@inlinable @inline(__always)
func valueBarrier(_ x: UInt64) -> UInt64 { mpin_value_barrier(x) }

/// Masks: all-ones for true, zero for false, made without a branch and behind the barrier.
@usableFromInline
enum Mask {
    /// All-ones when `bit` is 1, zero when it is 0 (`bit` must be 0 or 1).
    @inlinable @inline(__always)
    static func ofBit(_ bit: UInt64) -> UInt64 { valueBarrier(0 &- bit) }

    /// All-ones when `a == b`.
    @inlinable @inline(__always)
    static func equal(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let diff = a ^ b
        // (diff | −diff) has its top bit set exactly when diff ≠ 0.
        return valueBarrier(((diff | (0 &- diff)) >> 63) &- 1)
    }

    /// All-ones when `x`, read as a signed number, is negative (its top bit).
    @inlinable @inline(__always)
    static func ofSign(_ x: UInt64) -> UInt64 { valueBarrier(0 &- (x >> 63)) }
}
