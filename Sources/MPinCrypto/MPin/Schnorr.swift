/// Schnorr signatures on BN254's G1, the group M-Pin already computes in, so that a host can
/// check that the final answer of a login came from the server whose public key it pinned at
/// registration (signed verdicts, docs/PROTOCOL.md §4.5.1). No other library is needed on the
/// client, and nothing is loaded at login time.
///
/// The scheme is Schnorr's (J. Crypto 1991), in the key-prefixed form BIP-340 also uses:
/// - secret key x uniform in [1, r); public key X = x·G (65-byte encoding);
/// - sign m: k uniform in [1, r) from the system CSPRNG, R = k·G,
///   e = H(R ‖ X ‖ m) mod r, s = k + e·x mod r; the signature is R ‖ s (65 + 32 bytes);
/// - verify: R and X decode (canonical, on the curve; G1 has cofactor 1, so every point on it
///   is in the group), s is canonical, and s·G = R + e·X.
/// H is SHA-256 under a domain tag, widened to 512 bits (two tagged hashes) before the
/// reduction mod r, so e is uniform to within 2^-250 like SystemRandom.scalar's values.
///
/// Signing uses x and k only through constant-time operations (G1 multiplication by a secret
/// scalar, Fr arithmetic). Verifying works on public data.
package enum Schnorr {
    /// 65-byte R ‖ 32-byte s.
    package static let signatureSize = G1Point.encodedSize + 32

    /// The public key of a secret key (32 big-endian bytes in [1, r)).
    package static func publicKey(secretKey: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let x = SecretScalar(try secretScalar(secretKey))
        return try G1Point.generator.multiplied(by: x.value.value).encoded()
    }

    /// A new key pair from the system CSPRNG. The caller owns the secret key and wipes it.
    package static func generateKeyPair() throws(MPinCryptoError) -> (secretKey: [UInt8], publicKey: [UInt8]) {
        var x = try SystemRandom.scalar()
        // x = 0 has probability about 2^-254; draw again rather than fail.
        while x.reduce(0, |) == 0 { x = try SystemRandom.scalar() }
        return (x, try publicKey(secretKey: x))
    }

    /// The signature of `message` under `secretKey`.
    package static func sign(_ message: [UInt8], secretKey: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let x = SecretScalar(try secretScalar(secretKey))
        let publicKey = try G1Point.generator.multiplied(by: x.value.value).encoded()
        var nonce = try SystemRandom.scalar()
        while nonce.reduce(0, |) == 0 { nonce = try SystemRandom.scalar() }
        let k = SecretScalar(Fr(UInt256(bigEndian: nonce)!))
        nonce.wipe()
        let r = try G1Point.generator.multiplied(by: k.value.value).encoded()
        let e = challenge(r: r, publicKey: publicKey, message: message)
        let s = k.value + e * x.value
        return r + s.bytes
    }

    /// Whether `signature` is `publicKey`'s signature of `message`. Malformed input is false,
    /// never a trap.
    package static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureSize,
              let x = try? G1Point(bytes: publicKey),
              let r = try? G1Point(bytes: signature[0..<G1Point.encodedSize]),
              let s = Fr(canonicalBytes: signature[G1Point.encodedSize...]) else { return false }
        let e = challenge(r: Array(signature[0..<G1Point.encodedSize]), publicKey: publicKey, message: message)
        let left = G1Point.generator.multiplied(byPublic: s.value)
        let right = r + x.multiplied(byPublic: e.value)
        return left == right
    }

    /// e = H(R ‖ X ‖ m) mod r, from 512 bits (two SHA-256 values under distinct tags).
    static func challenge(r: [UInt8], publicKey: [UInt8], message: [UInt8]) -> Fr {
        func tagged(_ part: UInt8) -> UInt256 {
            var input = Array("mpin-schnorr-g1-v1".utf8)
            input.append(part)
            input += r
            input += publicKey
            input += message
            return UInt256(bigEndian: SHA256.hash(input))!
        }
        // hi·2^256 + lo (mod r); 2^256 mod r is Fr's Montgomery constant R, as in SystemRandom.scalar.
        return Fr(tagged(1)) * Fr(BN254ScalarModulus.rModM) + Fr(tagged(2))
    }

    /// A secret key as a scalar: 32 bytes, canonical, not zero.
    static func secretScalar(_ bytes: [UInt8]) throws(MPinCryptoError) -> Fr {
        guard bytes.count == 32 else { throw .invalidLength(expected: 32, got: bytes.count) }
        guard let x = Fr(canonicalBytes: bytes) else { throw .nonCanonical }
        guard !x.isZero else { throw .zeroScalar }
        return x
    }
}
