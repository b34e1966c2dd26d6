/// The M-Pin client steps over `SecretBytes`: every secret they take or produce (PIN, token,
/// client secret, x, SEC) stays in a buffer that wipes itself. The byte-array versions in
/// MPin.swift remain for the vectors, the server and the tests, whose inputs are not secrets
/// of a live user.
extension MPin {
    /// `sdkPINValue` of a PIN held as a secret.
    package static func sdkPINValue(_ pin: borrowing SecretBytes) -> Int32 {
        pin.withUnsafeBytes { sdkPINValue($0) }
    }

    /// A fresh random scalar (`SystemRandom.scalar`) held as a secret.
    package static func secretScalar() throws(MPinCryptoError) -> SecretBytes {
        var x = try SystemRandom.scalar()
        return SecretBytes(taking: &x)
    }

    /// The client secret from its two D-TA shares (`recombineG1`).
    package static func recombineClientSecret(_ share1: borrowing SecretBytes, _ share2: borrowing SecretBytes)
        throws(MPinCryptoError) -> SecretBytes {
        var cs = try share1.withTemporaryArray { (a) throws(MPinCryptoError) in
            try share2.withTemporaryArray { (b) throws(MPinCryptoError) in try recombineG1(a, b) }
        }
        return SecretBytes(taking: &cs)
    }

    /// The token a device keeps: the client secret with the PIN folded out (`extractPIN`).
    package static func extractPIN(mpinID: [UInt8], pin: borrowing SecretBytes, clientSecret: borrowing SecretBytes)
        throws(MPinCryptoError) -> SecretBytes {
        let value = sdkPINValue(pin)
        var token = try clientSecret.withTemporaryArray { (cs) throws(MPinCryptoError) in
            try extractPIN(mpinID: mpinID, pin: value, clientSecret: cs)
        }
        return SecretBytes(taking: &token)
    }

    /// The token of a user with two factors (docs/MFA.md §10): TOKEN = CS − (f0(pin0) + f1(pin1))·A.
    /// With an empty `pin1` this is `extractPIN(mpinID:pin:clientSecret:)`, bit for bit.
    package static func extractPIN(mpinID: [UInt8], pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                                  clientSecret: borrowing SecretBytes) throws(MPinCryptoError) -> SecretBytes {
        let factors = PINFactors.of(pin0: sdkPINValue(pin0), pin1: pin1, mpinID: mpinID)
        var token = try clientSecret.withTemporaryArray { (cs) throws(MPinCryptoError) in
            try extractPIN(mpinID: mpinID, factors: factors, clientSecret: cs)
        }
        return SecretBytes(taking: &token)
    }

    /// Pass 1's results: U and UT go to the server, SEC stays for pass 2.
    package struct Pass1: ~Copyable {
        package let u: [UInt8]
        package let ut: [UInt8]?
        package let sec: SecretBytes
    }

    /// Client pass 1 (`client1`) with the PIN, x and the token held as secrets.
    package static func client1(date: Int32, mpinID: [UInt8], x: borrowing SecretBytes, pin: borrowing SecretBytes,
                               token: borrowing SecretBytes, timePermit: [UInt8]?) throws(MPinCryptoError) -> Pass1 {
        let value = sdkPINValue(pin)
        var r = try x.withTemporaryArray { (xa) throws(MPinCryptoError) in
            try token.withTemporaryArray { (t) throws(MPinCryptoError) in
                try client1(date: date, mpinID: mpinID, x: xa, pin: value, token: t, timePermit: timePermit)
            }
        }
        return Pass1(u: r.u, ut: r.ut, sec: SecretBytes(taking: &r.sec))
    }

    /// Client pass 1 for a user with two factors (docs/MFA.md §10): SEC = TOKEN + (f0(pin0) +
    /// f1(pin1))·A (+ the time permit). With an empty `pin1` this is the one-PIN `client1`.
    package static func client1(date: Int32, mpinID: [UInt8], x: borrowing SecretBytes, pin0: borrowing SecretBytes,
                               pin1: borrowing SecretBytes, token: borrowing SecretBytes,
                               timePermit: [UInt8]?) throws(MPinCryptoError) -> Pass1 {
        let factors = PINFactors.of(pin0: sdkPINValue(pin0), pin1: pin1, mpinID: mpinID)
        var r = try x.withTemporaryArray { (xa) throws(MPinCryptoError) in
            try token.withTemporaryArray { (t) throws(MPinCryptoError) in
                try client1(date: date, mpinID: mpinID, x: xa, factors: factors, token: t, timePermit: timePermit)
            }
        }
        return Pass1(u: r.u, ut: r.ut, sec: SecretBytes(taking: &r.sec))
    }

    /// Client pass 2 (`client2`): V is public, x and SEC stay secret.
    package static func client2(x: borrowing SecretBytes, y: [UInt8], sec: borrowing SecretBytes) throws(MPinCryptoError) -> [UInt8] {
        try x.withTemporaryArray { (xa) throws(MPinCryptoError) in
            try sec.withTemporaryArray { (s) throws(MPinCryptoError) in try client2(x: xa, y: y, sec: s) }
        }
    }
}
