/// Why a cryptographic input was refused. No case carries secret material.
package enum MPinCryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An encoding had the wrong number of bytes.
    case invalidLength(expected: Int, got: Int)
    /// A G1 encoding did not start with 0x04 (or 0x02/0x03 where compressed points are allowed).
    case invalidPrefix
    /// A coordinate or scalar was not below its modulus.
    case nonCanonical
    /// The coordinates do not satisfy the curve equation.
    case notOnCurve
    /// A G2 point is on the twist but outside the subgroup of order r.
    case notInSubgroup
    /// The point at infinity where a finite point is required.
    case pointAtInfinity
    /// A date (day number) that is negative or out of range.
    case invalidDate
    /// The operating system's random number generator failed.
    case randomnessUnavailable
    /// Hex text that is not an even number of hexadecimal digits.
    case invalidHex
    /// A secret scalar that must be invertible (a DVS key z) was zero modulo the group order.
    case zeroScalar

    package var description: String {
        switch self {
        case let .invalidLength(expected, got): "invalid length: expected \(expected) bytes, got \(got)"
        case .invalidPrefix: "invalid point prefix byte"
        case .nonCanonical: "value not below the modulus"
        case .notOnCurve: "point not on the curve"
        case .notInSubgroup: "point not in the prime-order subgroup"
        case .pointAtInfinity: "point at infinity not allowed"
        case .invalidDate: "invalid date"
        case .randomnessUnavailable: "the system random number generator failed"
        case .invalidHex: "invalid hexadecimal text"
        case .zeroScalar: "scalar is zero modulo the group order"
        }
    }
}
