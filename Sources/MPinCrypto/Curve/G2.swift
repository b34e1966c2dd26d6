/// E': y² = x³ + 2/ξ = x³ + (1 − i) over Fp2, the D-type sextic twist carrying G2.
package enum BN254G2Curve: WeierstrassCurve {
    package static let b = Fp2(.one, -Fp.one)
    /// 3(1 − i)(a + bi) = 3((a + b) + (b − a)i).
    @inlinable
    package static func timesB3(_ x: Fp2) -> Fp2 {
        let t = Fp2(x.a + x.b, x.b - x.a)
        return t.doubled + t
    }
    /// An Fp2 squaring costs two Fp products, a multiplication three.
    package static var doublesBySquaring: Bool { true }
}

/// A point on the twist E'(Fp2). Decoded points are checked to lie in G2 (order r).
package typealias G2Point = ProjectivePoint<BN254G2Curve>

extension ProjectivePoint where C == BN254G2Curve {
    /// Milagro's G2 generator (docs/CRYPTO.md §1).
    package static let generator = G2Point(
        affineX: Fp2(Fp(UInt256(hex: "19682d2c7053b256358b2500f5c34bbb907c85bfa03e2726c0851ceee4d2ec74")!),
                     Fp(UInt256(hex: "1466b9ec3e19f64aa011c937a8e99743f81b97b0c209c30f47a58e8b2e29cfe1")!)),
        y: Fp2(Fp(UInt256(hex: "0a79edd972332b8dd81e22157daee2096361b33d847ec1b30cfbfcebcf0be09f")!),
               Fp(UInt256(hex: "06160c39ecc4c09035c6e4512d8d3461c2864ea569d2edebed904b228898ee9d")!)))

    /// The size of an encoding: X.a ‖ X.b ‖ Y.a ‖ Y.b, no prefix.
    package static let encodedSize = 128

    /// Decodes Milagro's 128-byte G2 form and checks, beyond Milagro: canonical
    /// coordinates and membership in the order-r subgroup (r·Q = O). Throws, never traps.
    package init(bytes: some Collection<UInt8>) throws(MPinCryptoError) {
        let raw = Array(bytes)
        guard raw.count == 128 else { throw .invalidLength(expected: 128, got: raw.count) }
        var k = [Fp]()
        for i in 0..<4 {
            guard let v = Fp(canonicalBytes: raw[(32 * i)..<(32 * i + 32)]) else { throw .nonCanonical }
            k.append(v)
        }
        let point = G2Point(affineX: Fp2(k[0], k[1]), y: Fp2(k[2], k[3]))
        guard point.isOnCurve else { throw .notOnCurve }
        guard point.isInPrimeOrderSubgroup else { throw .notInSubgroup }
        self = point
    }

    /// 128 bytes X.a ‖ X.b ‖ Y.a ‖ Y.b. Throws for the point at infinity.
    package func encoded() throws(MPinCryptoError) -> [UInt8] {
        guard let (x, y) = affine else { throw .pointAtInfinity }
        var out = [UInt8](repeating: 0, count: 128)
        x.a.value.writeBigEndian(into: &out, at: 0)
        x.b.value.writeBigEndian(into: &out, at: 32)
        y.a.value.writeBigEndian(into: &out, at: 64)
        y.b.value.writeBigEndian(into: &out, at: 96)
        return out
    }

    /// Whether Q lies in G2, the order-r subgroup. The twist has order r·(2p − r), so on-curve
    /// points need this check.
    ///
    /// Tested as ψ(Q) = [t − 1]Q with ψ the untwist-Frobenius-twist endomorphism and
    /// t − 1 = 6u² (127 bits), about half the work of r·Q = O. It is equivalent: ψ satisfies
    /// ψ² − tψ + p = 0 on the whole twist, so ψ(Q) = [t − 1]Q gives
    /// ((t − 1)² − t(t − 1) + p)·Q = (p + 1 − t)·Q = r·Q = O; conversely ψ acts on G2 as
    /// multiplication by p ≡ t − 1 (mod r). (El Housni, Guillevic and Piellard, "Co-factor
    /// clearing and subgroup membership testing on pairing-friendly curves", 2022, give the
    /// same test for BN curves.) The sequence of operations depends only on the public
    /// constant, so the test is constant-time in Q (server secrets are decoded with it).
    package var isInPrimeOrderSubgroup: Bool {
        psi == multiplied(byPublic: Self.traceMinusOne)
    }

    /// t − 1 = 6u² = p mod r, ψ's eigenvalue on G2.
    static let traceMinusOne = UInt256(0x0054634925303646, 0x600000000b403813, 0, 0)

    /// ψ(Q) = (conj(X)·f², conj(Y)·f³ : conj(Z)) in projective coordinates, f = ξ^((p−1)/6):
    /// the map the pairing's final lines use for π(Q) (conj(x)·f², conj(y)·f³ in affine form).
    var psi: G2Point {
        let frob = FrobeniusConstants.shared
        return G2Point(x: x.conjugate * frob.f2, y: y.conjugate * frob.f3, z: z.conjugate)
    }

    /// ψ²(Q) = (ω·X, −Y, Z), the same coordinates as `psi` twice: ψ twice multiplies X by
    /// f²·conj(f²) = ξ^((p²−1)/3), a cube root of unity ω in Fp, and Y by f³·conj(f³) =
    /// ξ^((p²−1)/2) = −1 (ξ is not a square in Fp2, or the twist would not be sextic). Two Fp
    /// products instead of two Fp2 products.
    var psiSquared: G2Point {
        G2Point(x: x.scaled(by: FrobeniusConstants.shared.psiSquaredX), y: -y, z: z)
    }

    /// The point with abscissa x on the twist, choosing the square root Fp2.squareRoot gives
    /// (Milagro's `ECP2_setx`), or nil when x³ + b' is not a square. Public data only.
    package init?(x: Fp2) {
        guard let y = (x.squared * x + BN254G2Curve.b).squareRoot() else { return nil }
        self.init(affineX: x, y: y)
    }
}
