/// E: y² = x³ + 2 over Fp, the BN254CX curve whose points form G1 (cofactor 1).
package enum BN254G1Curve: WeierstrassCurve {
    package static let b = Fp(2)
    /// 6x = 2·(2x + x).
    @inlinable
    package static func timesB3(_ x: Fp) -> Fp { let t = x.doubled + x; return t.doubled }
}

/// A point of G1. Every point of E(Fp) except infinity has order r.
package typealias G1Point = ProjectivePoint<BN254G1Curve>

extension ProjectivePoint where C == BN254G1Curve {
    /// The generator (−1, 1) Milagro uses.
    package static let generator = G1Point(affineX: -Fp.one, y: .one)

    /// The size of an uncompressed encoding: 0x04 ‖ x ‖ y.
    package static let encodedSize = 65

    /// Decodes Milagro's uncompressed form 0x04 ‖ X ‖ Y (65 bytes).
    ///
    /// Stricter than Milagro (which reduces coordinates and ignores the prefix in 1.0.0):
    /// the prefix must be 0x04, both coordinates canonical (< p), the point on the curve.
    /// The point at infinity has no encoding. Throws, never traps.
    package init(bytes: some Collection<UInt8>) throws(MPinCryptoError) {
        let raw = Array(bytes)
        guard raw.count == 65 else { throw .invalidLength(expected: 65, got: raw.count) }
        guard raw[0] == 0x04 else { throw .invalidPrefix }
        guard let x = Fp(canonicalBytes: raw[1..<33]), let y = Fp(canonicalBytes: raw[33..<65]) else {
            throw .nonCanonical
        }
        let point = G1Point(affineX: x, y: y)
        guard point.isOnCurve else { throw .notOnCurve }
        self = point
    }

    /// Decodes Milagro's compressed form (0x02 or 0x03 ‖ X, 33 bytes); the low bit of the
    /// prefix is the parity of y.
    package init(compressedBytes bytes: some Collection<UInt8>) throws(MPinCryptoError) {
        let raw = Array(bytes)
        guard raw.count == 33 else { throw .invalidLength(expected: 33, got: raw.count) }
        guard raw[0] == 0x02 || raw[0] == 0x03 else { throw .invalidPrefix }
        guard let x = Fp(canonicalBytes: raw[1..<33]) else { throw .nonCanonical }
        guard let point = G1Point(x: x, parity: UInt64(raw[0] & 1)) else { throw .notOnCurve }
        self = point
    }

    /// The point with abscissa x and y of the given parity (0 even, 1 odd), if x is on the
    /// curve. For public data: the square root is not constant-time in its outcome.
    package init?(x: Fp, parity: UInt64) {
        let (root, ok) = (x.squared * x + BN254G1Curve.b).squareRoot()
        guard ok else { return nil }
        let y = root.parity == parity ? root : -root
        self.init(affineX: x, y: y)
    }

    /// 65 bytes 0x04 ‖ X ‖ Y. Throws for the point at infinity, which has no encoding.
    package func encoded() throws(MPinCryptoError) -> [UInt8] {
        guard let (x, y) = affine else { throw .pointAtInfinity }
        var out = [UInt8](repeating: 0x04, count: 65)
        x.value.writeBigEndian(into: &out, at: 1)
        y.value.writeBigEndian(into: &out, at: 33)
        return out
    }

    /// The 65-byte encodings of several points with one field inversion shared by all
    /// (Montgomery's simultaneous-inversion trick: invert the product of the Z coordinates,
    /// then peel each inverse off with two multiplications). Throws `.pointAtInfinity` when
    /// any point is at infinity, as `encoded()` does. The same operations for every input of
    /// a given count.
    package static func encoded(_ points: [G1Point]) throws(MPinCryptoError) -> [[UInt8]] {
        for p in points where p.isInfinity { throw .pointAtInfinity }
        guard !points.isEmpty else { return [] }
        // prefix[i] = z_0 ⋯ z_i
        var prefix = [Fp]()
        prefix.reserveCapacity(points.count)
        var running = Fp.one
        for p in points { running = running * p.z; prefix.append(running) }
        var inverse = running.inverse // (z_0 ⋯ z_{n−1})⁻¹
        var out = [[UInt8]](repeating: [], count: points.count)
        for i in stride(from: points.count - 1, through: 0, by: -1) {
            let zi = i > 0 ? inverse * prefix[i - 1] : inverse // z_i⁻¹
            inverse = inverse * points[i].z
            var bytes = [UInt8](repeating: 0x04, count: 65)
            (points[i].x * zi).value.writeBigEndian(into: &bytes, at: 1)
            (points[i].y * zi).value.writeBigEndian(into: &bytes, at: 33)
            out[i] = bytes
        }
        return out
    }

    /// The affine coordinates of several points with one field inversion for all (the
    /// simultaneous inversion of `encoded(_:)`); nil for a point at infinity, as `affine`
    /// gives. A point at infinity enters the product as z = 1 (by mask), so the others'
    /// inverses stay right. Whether a point is at infinity is the only branch, as in `affine`.
    static func affine(of points: [G1Point]) -> [(x: Fp, y: Fp)?] {
        if points.count == 1 { return [points[0].affine] } // nothing to share
        let zs = points.map { Fp.select($0.isInfinityMask, .one, $0.z) }
        var prefix = [Fp]() // prefix[i] = z_0 ⋯ z_i
        prefix.reserveCapacity(zs.count)
        var running = Fp.one
        for z in zs { running = running * z; prefix.append(running) }
        var inverse = running.inverse
        var out = [(x: Fp, y: Fp)?](repeating: nil, count: points.count)
        for i in stride(from: points.count - 1, through: 0, by: -1) {
            let zi = i > 0 ? inverse * prefix[i - 1] : inverse // z_i⁻¹
            inverse = inverse * zs[i]
            if !points[i].isInfinity { out[i] = (points[i].x * zi, points[i].y * zi) }
        }
        return out
    }

    /// Milagro's `ECP_mapit`: read the 32 hash bytes as an integer mod p and try x, x+1, ...
    /// until x³ + 2 is a square; take the even square root. Not constant-time (public input).
    /// Like Milagro it reads the first 32 bytes; a shorter input is padded on the left.
    package static func map(hash: some Collection<UInt8>) -> G1Point {
        let first = Array(hash.prefix(32))
        var x = Fp(UInt256(bigEndian: [UInt8](repeating: 0, count: 32 - first.count) + first)!)
        while true {
            if let point = G1Point(x: x, parity: 0) { return point }
            x += .one
        }
    }
}
