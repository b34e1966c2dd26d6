/// The DVS client steps over `SecretBytes`, with the MFA flavour's optional second factor
/// (docs/MFA.md §10, §14): every secret (z, the client secret, the token, the PINs, x, SEC)
/// stays in a buffer that wipes itself. With an empty `pin1` each step is the Milagro step of
/// DVS.swift, bit for bit.
extension DVS {
    /// A new key pair: z goes into `secretKey` (a buffer that wipes itself; its old contents
    /// are wiped), the public key Pa is returned.
    package static func generateKeyPair(secretKey: inout SecretBytes) throws(MPinCryptoError) -> DVSPublicKey {
        var (z, pa) = try generateKeyPair()
        secretKey = SecretBytes(taking: &z)
        return pa
    }

    /// The token the device keeps for signing: z·CS − (f0(pin0) + f1(pin1))·A on the signing
    /// identity, where CS is the client secret the D-TAs issued for `ID ‖ Pa`.
    package static func extractToken(signingIdentity: [UInt8], pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                                    clientSecret: borrowing SecretBytes, secretKey z: borrowing SecretBytes)
        throws(MPinCryptoError) -> SecretBytes {
        var keyed = try clientSecret.withTemporaryArray { (cs) throws(MPinCryptoError) in
            try z.withTemporaryArray { (k) throws(MPinCryptoError) in try keyedClientSecret(clientSecret: cs, secretKey: k) }
        }
        let keyedSecret = SecretBytes(taking: &keyed)
        return try MPin.extractPIN(mpinID: signingIdentity, pin0: pin0, pin1: pin1, clientSecret: keyedSecret)
    }

    /// Signs `message` (the document hash) with a fresh x: Milagro's one-pass client with date 0,
    /// SEC = TOKEN + (f0(pin0) + f1(pin1))·A. A wrong factor gives a signature that does not verify.
    package static func sign(signingIdentity: [UInt8], pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                            token: borrowing SecretBytes, message: [UInt8], timeValue: Int32) throws(MPinCryptoError) -> DVSSignature {
        guard timeValue >= 0 else { throw .invalidDate }
        let x = try MPin.secretScalar()
        let pass1 = try MPin.client1(date: 0, mpinID: signingIdentity, x: x, pin0: pin0, pin1: pin1, token: token, timePermit: nil)
        let y = challenge(u: pass1.u, message: message, timeValue: timeValue)
        let v = try MPin.client2(x: x, y: y, sec: pass1.sec)
        return try DVSSignature(u: pass1.u, v: v, timeValue: timeValue)
    }
}

extension DVSPublicKey {
    /// The length of Pa's encoding.
    package static let byteCount = 128
}
