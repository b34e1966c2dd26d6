/// M-Pin designated verifier signatures (DVS) on BN254CX, bit-compatible with Milagro's
/// `MPIN_GET_DVS_KEYPAIR`, `MPIN_CLIENT` with a message and `MPIN_SERVER` with a public key
/// (docs/DVS.md describes the scheme and its encodings).
///
/// The flow, with Q the G2 generator, s the master secret and r the group order:
/// 1. Key pair: a secret scalar z in [1, r) and the public key Pa = (z⁻¹ mod r)·Q, 128 bytes.
///    (Milagro's header comment says z·Q; the library computes the inverse.)
/// 2. Signing identity: the plain concatenation ID ‖ Pa (no length, no separator). It replaces
///    the M-Pin identity everywhere: A = map(SHA-256(ID ‖ Pa)).
/// 3. The D-TAs issue s·A for that identity as usual; the client folds its key in: z·s·A.
/// 4. Token: z·s·A − f(PIN)·A (`MPin.extractPIN` on the signing identity; the PIN term is not
///    multiplied by z).
/// 5. Signing (one pass, no time permit, date 0): random x, SEC = TOKEN + f(PIN')·A, U = x·A,
///    y = SHA-256(be32(T) ‖ U ‖ M) mod r (the 4 time bytes only when T > 0), V = −(x + y)·SEC.
/// 6. Verifying: y' from U, T and the message received; accept iff
///    e(Pa, V) · e(s·Q, y'·A + U) = 1, the pass-2 check with Pa in place of Q. A wrong PIN and a
///    changed message are indistinguishable (Milagro's MPIN_BAD_PIN, −19).
///
/// Constant time in the secrets: z (inversion by a fixed exponent, fixed-window scalar
/// multiplications), the token, the PIN (fixed-length ladder) and x. Hashing to the curve,
/// decoding and verifying work on public data.
package enum DVS {
    // MARK: Key pair

    /// The public key of a secret key z: Pa = (z⁻¹ mod r)·Q (`MPIN_GET_DVS_KEYPAIR` with a given z).
    /// z is 32 big-endian bytes in [1, r): `.nonCanonical` when z ≥ r, `.zeroScalar` when z = 0.
    package static func publicKey(secretKey z: [UInt8]) throws(MPinCryptoError) -> DVSPublicKey {
        let k = SecretScalar(try secretKey(z))
        let inverse = SecretScalar(k.value.inverse)
        return DVSPublicKey(validated: G2Point.generatorMultiple(inverse.value.value))
    }

    /// A new key pair: z uniform in [1, r) from the system CSPRNG, and Pa.
    /// The caller owns z (a secret) and should wipe it after use.
    package static func generateKeyPair() throws(MPinCryptoError) -> (secretKey: [UInt8], publicKey: DVSPublicKey) {
        var z = try SystemRandom.scalar()
        // z = 0 has probability about 2^-254; redraw rather than fail. The test ORs every byte
        // (no early exit on the secret's first non-zero byte).
        while z.reduce(0, |) == 0 { z = try SystemRandom.scalar() }
        return (z, try publicKey(secretKey: z))
    }

    // MARK: Identity

    /// The signing identity ID ‖ Pa: the identity bytes, then the 128-byte public key.
    package static func signingIdentity(mpinID: [UInt8], publicKey: DVSPublicKey) -> [UInt8] {
        mpinID + publicKey.bytes
    }

    /// Splits a signing identity received from elsewhere into ID and a fully validated Pa (its
    /// last 128 bytes). The identity part must not be empty: fewer than 129 bytes throw
    /// `.invalidLength(expected: 129, got:)`; a bad key throws as `DVSPublicKey(bytes:)`.
    package static func splitSigningIdentity(_ identity: [UInt8]) throws(MPinCryptoError)
        -> (mpinID: [UInt8], publicKey: DVSPublicKey) {
        let keySize = G2Point.encodedSize
        guard identity.count > keySize else { throw .invalidLength(expected: keySize + 1, got: identity.count) }
        let split = identity.count - keySize
        return (Array(identity[..<split]), try DVSPublicKey(bytes: identity[split...]))
    }

    // MARK: Client

    /// Folds the key into the client secret issued for the signing identity: z·CS (z·s·A).
    package static func keyedClientSecret(clientSecret: [UInt8], secretKey z: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let cs = try G1Point(bytes: clientSecret)
        let k = SecretScalar(try secretKey(z))
        return try cs.multiplied(by: k.value.value).encoded()
    }

    /// The stored token: z·s·A − f(PIN)·A for A = map(SHA-256(ID ‖ Pa)), Milagro's
    /// `MPIN_EXTRACT_PIN` applied to the keyed client secret and the signing identity.
    package static func extractToken(signingIdentity: [UInt8], pin: Int32, keyedClientSecret: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        try MPin.extractPIN(mpinID: signingIdentity, pin: pin, clientSecret: keyedClientSecret)
    }

    /// Signs `message` with a fresh random x (see `sign(signingIdentity:x:pin:token:message:timeValue:)`).
    package static func sign(signingIdentity: [UInt8], pin: Int32, token: [UInt8], message: [UInt8],
                            timeValue: Int32) throws(MPinCryptoError) -> DVSSignature {
        var x = try SystemRandom.scalar()
        defer { x.wipe() }
        return try sign(signingIdentity: signingIdentity, x: x, pin: pin, token: token, message: message, timeValue: timeValue)
    }

    /// Milagro's one-pass `MPIN_CLIENT` with date 0 and a message: SEC = TOKEN + f(PIN)·A,
    /// U = x·A, y = SHA-256(be32(T) ‖ U ‖ message) mod r, V = −(x + y)·SEC.
    ///
    /// `timeValue` T is the signer's clock in Unix seconds; T = 0 leaves the time prefix out of
    /// the hash, as Milagro does. A negative T throws `.invalidDate` (Milagro would hash it like
    /// 0, so two different claimed times would share one signature).
    package static func sign(signingIdentity: [UInt8], x: [UInt8], pin: Int32, token: [UInt8], message: [UInt8],
                            timeValue: Int32) throws(MPinCryptoError) -> DVSSignature {
        guard timeValue >= 0 else { throw .invalidDate }
        let out = try MPin.client(date: 0, mpinID: signingIdentity, x: x, pin: pin, token: token, timePermit: nil,
                                  message: message, timeValue: timeValue)
        return try DVSSignature(u: out.u, v: out.v, timeValue: timeValue)
    }

    /// y = SHA-256(be32(T) ‖ U ‖ message) mod r, 32 bytes; no time prefix when T = 0.
    package static func challenge(u: [UInt8], message: [UInt8], timeValue: Int32) -> [UInt8] {
        MPin.challenge(timeValue: timeValue, message: u + message)
    }

    // MARK: Verifier

    /// Verifies a signature of `message` by the user registered as `mpinID` with public key
    /// `publicKey`: e(Pa, V) · e(s·Q, y·A + U) = 1 with A = map(SHA-256(mpinID ‖ Pa)) and y the
    /// challenge recomputed from U, T and `message`. One double Miller loop, one final
    /// exponentiation; the server secret's lines are prepared once by the caller.
    package static func verify(_ signature: DVSSignature, message: [UInt8], mpinID: [UInt8], publicKey: DVSPublicKey,
                              serverSecret: PreparedG2) -> Bool {
        check(signature, message: message, signingIdentity: signingIdentity(mpinID: mpinID, publicKey: publicKey),
              publicKey: publicKey, serverSecret: serverSecret)
    }

    /// Milagro's `MPIN_SERVER` with Pa, from octets: the signing identity ID ‖ Pa and Pa given
    /// separately, as the library takes them. Returns `.invalidPoint` when Pa, the server secret,
    /// U or V fails to decode (or T is negative), `.badPIN` when the check fails, `.ok` otherwise.
    package static func verify(signingIdentity: [UInt8], publicKey: [UInt8], serverSecret: [UInt8], u: [UInt8], v: [UInt8],
                              message: [UInt8], timeValue: Int32) -> MPin.ServerResult {
        do throws(MPinCryptoError) {
            let pa = try DVSPublicKey(bytes: publicKey)
            let ss = PreparedG2(oneShot: try G2Point(bytes: serverSecret))
            let signature = try DVSSignature(u: u, v: v, timeValue: timeValue)
            return check(signature, message: message, signingIdentity: signingIdentity, publicKey: pa, serverSecret: ss)
                ? .ok : .badPIN
        } catch {
            return .invalidPoint
        }
    }

    /// The pairing check on decoded values.
    static func check(_ signature: DVSSignature, message: [UInt8], signingIdentity: [UInt8], publicKey: DVSPublicKey,
                      serverSecret: PreparedG2) -> Bool {
        let y = challenge(u: signature.u, message: message, timeValue: signature.timeValue)
        guard let ys = UInt256(bigEndian: y) else { return false }
        let a = MPin.identityPoint(mpinID: signingIdentity)
        let p = a.multiplied(by: ys) + signature.uPoint
        // y·A + U = O only if U = −y·A, which no honest signer produces; the pairing would
        // ignore that term, so refuse here.
        if p.isInfinity { return false }
        return Pairing.doublePairing(prepared: publicKey.prepared, signature.vPoint,
                                     prepared: serverSecret, p).isOne
    }

    // MARK: Helpers

    /// z as an element of Fr, required to be canonical (< r) and non-zero. Only the outcome of
    /// the checks branches, never the value.
    static func secretKey(_ z: [UInt8]) throws(MPinCryptoError) -> Fr {
        let v = SecretScalar(try MPin.scalar(z))
        guard v.value.lessThanMask(BN254ScalarModulus.modulus) != 0 else { throw .nonCanonical }
        guard v.value.isZeroMask == 0 else { throw .zeroScalar }
        return Fr(v.value)
    }
}

/// A DVS public key Pa in G2, decoded and validated.
package struct DVSPublicKey: Sendable, Equatable {
    /// The 128-byte encoding x.a ‖ x.b ‖ y.a ‖ y.b (real parts first, no prefix byte).
    package let bytes: [UInt8]
    /// The point; always finite, on the twist and of order r.
    package let point: G2Point
    /// Its Miller-loop lines, computed once here: a verifier that keeps the decoded key pays
    /// only the line evaluations per signature.
    package let prepared: PreparedG2

    /// Decodes 128 bytes with full validation: `.invalidLength` for any other size,
    /// `.pointAtInfinity` for the all-zero string (the usual stand-in for infinity, which
    /// Milagro's G2 form cannot express), `.nonCanonical` for a coordinate ≥ p, `.notOnCurve`
    /// off the twist and `.notInSubgroup` outside the order-r subgroup. Throws, never traps.
    package init(bytes: some Collection<UInt8>) throws(MPinCryptoError) {
        let raw = Array(bytes)
        guard raw.count == G2Point.encodedSize else { throw .invalidLength(expected: G2Point.encodedSize, got: raw.count) }
        guard raw.contains(where: { $0 != 0 }) else { throw .pointAtInfinity }
        point = try G2Point(bytes: raw)
        prepared = PreparedG2(oneShot: point)
        self.bytes = raw
    }

    /// A key computed here (z⁻¹·Q with z ≠ 0 mod r): finite and in G2 by construction.
    init(validated point: G2Point) {
        self.point = point
        prepared = PreparedG2(oneShot: point)
        // Only infinity has no encoding, and z⁻¹·Q for z ≠ 0 is never infinity.
        self.bytes = (try? point.encoded()) ?? []
    }

    package static func == (a: DVSPublicKey, b: DVSPublicKey) -> Bool { a.bytes == b.bytes }
}

/// A DVS signature: U = x·A and V = −(x + y)·SEC as decoded G1 points, with the signer's time
/// value T (Unix seconds, 0 for none) that enters the challenge. The message travels separately.
package struct DVSSignature: Sendable, Equatable {
    /// U, 65 bytes 0x04 ‖ x ‖ y.
    package let u: [UInt8]
    /// V, 65 bytes 0x04 ‖ x ‖ y.
    package let v: [UInt8]
    /// T, Unix seconds, ≥ 0.
    package let timeValue: Int32
    let uPoint: G1Point
    let vPoint: G1Point

    /// Decodes U and V as G1 points (length 65, prefix 0x04, canonical coordinates, on the
    /// curve; the G1 cofactor is 1, so that is subgroup membership too) and requires T ≥ 0
    /// (`.invalidDate`). Throws, never traps.
    package init(u: [UInt8], v: [UInt8], timeValue: Int32) throws(MPinCryptoError) {
        guard timeValue >= 0 else { throw .invalidDate }
        uPoint = try G1Point(bytes: u)
        vPoint = try G1Point(bytes: v)
        self.u = u
        self.v = v
        self.timeValue = timeValue
    }

    package static func == (a: DVSSignature, b: DVSSignature) -> Bool {
        a.u == b.u && a.v == b.v && a.timeValue == b.timeValue
    }
}
