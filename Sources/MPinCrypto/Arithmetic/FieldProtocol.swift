/// What the curve and tower code needs from a field (Fp, Fp2, ...).
///
/// Every operation is constant-time in its operands, equality included: conforming types
/// implement `==` as `equalMask(_:) != 0`, never with the synthesized member-by-member `==`,
/// which returns at the first coefficient (and the first limb) that differs.
public protocol FieldArithmetic: Sendable, Equatable {
    static var zero: Self { get }
    static var one: Self { get }
    static func + (a: Self, b: Self) -> Self
    static func - (a: Self, b: Self) -> Self
    static func * (a: Self, b: Self) -> Self
    static prefix func - (a: Self) -> Self
    var squared: Self { get }
    var doubled: Self { get }
    /// Multiplicative inverse, or zero for zero. Constant-time.
    var inverse: Self { get }
    /// All-ones when zero, else 0.
    var isZeroMask: UInt64 { get }
    /// `mask` all-ones selects `a`, zero selects `b`.
    static func select(_ mask: UInt64, _ a: Self, _ b: Self) -> Self
    /// All-ones when equal, else 0. Constant-time: every coefficient is compared.
    func equalMask(_ o: Self) -> UInt64
}

extension FieldArithmetic {
    @inlinable @inline(__always)
    public static func += (a: inout Self, b: Self) { a = a + b }
    @inlinable @inline(__always)
    public static func -= (a: inout Self, b: Self) { a = a - b }
    @inlinable @inline(__always)
    public static func *= (a: inout Self, b: Self) { a = a * b }
}

extension PrimeFieldElement: FieldArithmetic {}
