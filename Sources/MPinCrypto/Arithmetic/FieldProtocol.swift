/// What the curve and tower code needs from a field (Fp, Fp2, ...).
///
/// Every operation is constant-time in its operands, equality included: conforming types
/// implement `==` as `equalMask(_:) != 0`, never with the synthesized member-by-member `==`,
/// which returns at the first coefficient (and the first limb) that differs.
package protocol FieldArithmetic: Sendable, Equatable {
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
    package static func += (a: inout Self, b: Self) { a = a + b }
    @inlinable @inline(__always)
    package static func -= (a: inout Self, b: Self) { a = a - b }
    @inlinable @inline(__always)
    package static func *= (a: inout Self, b: Self) { a = a * b }
}

extension FieldArithmetic {
    /// The inverses of the elements with one inversion (Montgomery's simultaneous inversion:
    /// the running products, the inverse of the last, then two multiplications per element on
    /// the way back). A zero maps to zero, as `inverse` does, and nothing else: it enters the
    /// product as one (by mask), so that one zero cannot make every inverse zero (which would
    /// turn every line of a pairing into 1). The same operations for every input of a given
    /// count.
    package static func simultaneousInverses(_ xs: [Self]) -> [Self] {
        guard !xs.isEmpty else { return [] }
        let factors = xs.map { Self.select($0.isZeroMask, .one, $0) }
        var prefix = [Self]() // prefix[i] = x_0 ⋯ x_i
        prefix.reserveCapacity(factors.count)
        var running = Self.one
        for x in factors { running = running * x; prefix.append(running) }
        var inverse = running.inverse // (x_0 ⋯ x_i)⁻¹ for i = count − 1
        var out = factors
        for i in stride(from: factors.count - 1, through: 1, by: -1) {
            out[i] = inverse * prefix[i - 1]
            inverse = inverse * factors[i]
        }
        out[0] = inverse
        return out.indices.map { Self.select(xs[$0].isZeroMask, .zero, out[$0]) }
    }
}

extension PrimeFieldElement: FieldArithmetic {}
