/// The optional second factor `pin1` of the MFA flavour (docs/MFA.md §10).
///
/// The token folds out the sum of two PIN values instead of one:
/// TOKEN = CS − (f0(pin0) + f1(pin1))·A, the sum taken mod r, with f0 Milagro's 14-bit PIN
/// multiplier (`pinMultiplier(sdkPINValue(pin0))`) and
/// f1(pin1) = OS2IP(SHA-256("MPIN-PIN1" ‖ 0x00 ‖ SHA-256(mpinID) ‖ pin1)) mod r.
/// An empty pin1 gives f1 = 0 and takes Milagro's own code path, so single-factor tokens are
/// the Milagro tokens, bit for bit. The label and the identity hash separate f1's domain:
/// the same pin1 gives unrelated values for different identities and never collides with a
/// hash M-Pin computes elsewhere.
extension MPin {
    /// The domain-separation prefix of f1: the label and a zero byte.
    static let secondFactorLabel: [UInt8] = Array("MPIN-PIN1".utf8) + [0]

    /// f1(pin1) as an element of Fr; zero for an empty pin1. Constant time in pin1's bytes
    /// (SHA-256 and the reduction mod r do not branch on data); pin1's length is not secret.
    static func secondFactor(mpinID: [UInt8], pin1: borrowing SecretBytes) -> Fr {
        guard !pin1.isEmpty else { return .zero }
        var hasher = SHA256()
        hasher.update(secondFactorLabel)
        hasher.update(hashID(mpinID))
        pin1.withUnsafeBytes { hasher.update($0) }
        var digest = hasher.finalize()
        defer { digest.wipe() }
        // A SHA-256 digest is always 32 bytes, so the integer always exists.
        let integer = SecretScalar(UInt256(bigEndian: digest) ?? .zero)
        return Fr(integer.value)
    }

    /// f1(pin1) as 32 big-endian bytes of its canonical value in [0, r), held as a secret;
    /// 32 zero bytes for an empty pin1.
    package static func secondFactorValue(mpinID: [UInt8], pin1: borrowing SecretBytes) -> SecretBytes {
        let f1 = SecretScalar(secondFactor(mpinID: mpinID, pin1: pin1))
        var bytes = f1.value.bytes
        return SecretBytes(taking: &bytes)
    }

    /// The multiplier of A = map(SHA-256(mpinID)) that the PIN factors stand for. Not
    /// copyable: a combined multiplier is a `SecretScalar`, wiped with explicit_bzero when the
    /// factors go away, on every path (no `defer` store the optimiser may drop). The one-PIN
    /// case, the login's usual one, holds the PIN value inline and allocates nothing.
    enum PINFactors: ~Copyable {
        /// One PIN (the Milagro flavour, or an empty pin1): Milagro's 14-bit f0, multiplied
        /// by a fixed-length ladder exactly as before.
        case single(Int32)
        /// f0(pin0) + f1(pin1) mod r, multiplied by the constant-time windowed method.
        case combined(SecretScalar<Fr>)

        /// The factors of pin0 (an SDK PIN value) and pin1.
        static func of(pin0: Int32, pin1: borrowing SecretBytes, mpinID: [UInt8]) -> PINFactors {
            guard !pin1.isEmpty else { return .single(pin0) }
            // f1 becomes the sum in its own wiped storage: no unwiped copy of either is kept.
            let k = SecretScalar(secondFactor(mpinID: mpinID, pin1: pin1))
            k.update { $0 = Fr(pinMultiplier(pin0)) + $0 }
            return .combined(k)
        }

        /// k·A, constant time in k.
        borrowing func times(_ a: G1Point) -> G1Point {
            switch self {
            case .single(let pin): a.multiplied(bySmall: pinMultiplier(pin), bits: pinBits)
            case .combined(let k): a.multiplied(by: k.value.value)
            }
        }
    }
}
