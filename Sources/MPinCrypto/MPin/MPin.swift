/// The M-Pin primitives on BN254CX, byte-compatible with Milagro's `mpin_BN254CX.c`
/// (docs/CRYPTO.md §3–§7). Byte arrays are Milagro's octets: G1 points 65 bytes (0x04 ‖ x ‖ y),
/// G2 points 128 bytes, scalars and hashes 32 big-endian bytes, dates in days since the epoch
/// (0 = no time permit).
///
/// Constant-time entry points (no secret-dependent branch, loop count or memory index):
/// `serverSecret`, `clientSecret`, `timePermit` (secret master share), `extractPIN`,
/// `restorePIN`, `client1`, `client2`, `client` (PIN, token, x, time permit, SEC) and the
/// pairing check in `server2` (server secret). Hashing to the curve and decoding work on
/// public data and are not constant-time; `recombine*` add public or secret points with
/// complete (branch-free) formulas.
package enum MPin {
    /// Largest PIN value (exclusive) and the PIN bit length of Milagro (MAXPIN, PBLEN).
    package static let maxPIN: Int32 = 10000
    package static let pinBits = 14

    /// Milagro's error codes, as the vectors' SERVER_OUTPUT.
    package enum ServerResult: Int32, Sendable {
        case ok = 0
        case invalidPoint = -14
        case badPIN = -19
    }

    // MARK: Hashing (docs/CRYPTO.md §3)

    /// HASH_ID = SHA-256(MPIN_ID).
    package static func hashID(_ mpinID: some Sequence<UInt8>) -> [UInt8] { SHA256.hash(mpinID) }

    /// SHA-256(be32(date) ‖ hashedID), the time-permit hash. The date prefix is omitted when
    /// date ≤ 0, as in Milagro's `mhashit`.
    package static func hashDate(_ date: Int32, hashedID: [UInt8]) -> [UInt8] {
        var h = SHA256()
        if date > 0 { h.update(bigEndian32(date)) }
        h.update(hashedID)
        return h.finalize()
    }

    /// A = map(SHA-256(MPIN_ID)).
    package static func identityPoint(mpinID: some Sequence<UInt8>) -> G1Point {
        G1Point.map(hash: hashID(mpinID))
    }

    /// T = map(SHA-256(be32(date) ‖ HASH_ID)).
    package static func datePoint(date: Int32, hashedID: [UInt8]) -> G1Point {
        G1Point.map(hash: hashDate(date, hashedID: hashedID))
    }

    /// Milagro's one-pass challenge `MPIN_GET_Y`: SHA-256(be32(timeValue) ‖ message) mod r,
    /// the time prefix omitted when timeValue ≤ 0.
    package static func challenge(timeValue: Int32, message: [UInt8]) -> [UInt8] {
        var h = SHA256()
        if timeValue > 0 { h.update(bigEndian32(timeValue)) }
        h.update(message)
        return Fr(UInt256(bigEndian: h.finalize())!).bytes
    }

    // MARK: Secrets issued by the D-TAs (docs/CRYPTO.md §4)

    /// A new master-secret share: uniform in [0, r), 32 bytes.
    package static func randomMasterSecret() throws(MPinCryptoError) -> [UInt8] { try SystemRandom.scalar() }

    /// SS = s·Q, 128 bytes.
    package static func serverSecret(masterSecret s: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let k = SecretScalar(try scalar(s))
        return try G2Point.generatorMultiple(k.value).encoded()
    }

    /// CS = s·map(HASH_ID), 65 bytes. Takes the hashed identity, as Milagro does.
    package static func clientSecret(masterSecret s: [UInt8], hashedID: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        try requireLength(hashedID, 32)
        let k = SecretScalar(try scalar(s))
        return try G1Point.map(hash: hashedID).multiplied(by: k.value).encoded()
    }

    /// TP = s·map(SHA-256(be32(date) ‖ HASH_ID)), 65 bytes.
    package static func timePermit(date: Int32, masterSecret s: [UInt8], hashedID: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        guard date > 0 else { throw .invalidDate }
        try requireLength(hashedID, 32)
        let k = SecretScalar(try scalar(s))
        return try datePoint(date: date, hashedID: hashedID).multiplied(by: k.value).encoded()
    }

    /// P1 + P2 in G1 (recombines client-secret or time-permit shares).
    package static func recombineG1(_ p1: [UInt8], _ p2: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        try (G1Point(bytes: p1) + G1Point(bytes: p2)).encoded()
    }

    /// W1 + W2 in G2 (recombines server-secret shares).
    package static func recombineG2(_ w1: [UInt8], _ w2: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        try (G2Point(bytes: w1) + G2Point(bytes: w2)).encoded()
    }

    // MARK: PIN handling (docs/CRYPTO.md §5)

    /// The 14-bit multiplier Milagro derives from a PIN value: (pin % 10000) with C's
    /// truncating remainder, then its low 14 bits in two's complement.
    /// Constant-time: the remainder comes from a multiplication by the reciprocal
    /// (⌊n/10000⌋ = (n·0xD1B71759) >> 45 for every n < 2^32) and masks, not from a hardware
    /// division, whose latency can depend on the operands.
    package static func pinMultiplier(_ pin: Int32) -> UInt64 {
        let signMask = UInt32(bitPattern: pin >> 31)              // all-ones when negative
        let magnitude = (UInt32(bitPattern: pin) ^ signMask) &- signMask
        let quotient = UInt32(truncatingIfNeeded: (UInt64(magnitude) &* 0xD1B71759) >> 45)
        let remainder = magnitude &- quotient &* UInt32(maxPIN)
        let truncated = (remainder ^ signMask) &- signMask       // C's sign rule: follows pin
        return UInt64(truncated & 0x3FFF)
    }

    /// The value the original SDK passes as "pin": Java's String.hashCode over the PIN's
    /// bytes (h = 31·h + c, 32-bit wrap, bytes taken as signed), docs/CRYPTO.md §5.2.
    /// The loop runs over every byte whatever its value (the PIN's length is not secret).
    package static func sdkPINValue(_ pin: some Sequence<UInt8>) -> Int32 {
        var h: Int32 = 0
        for c in pin { h = h &* 31 &+ Int32(Int8(bitPattern: c)) }
        return h
    }

    /// TOKEN = CS − f(pin)·A with A = map(SHA-256(MPIN_ID)) (`MPIN_EXTRACT_PIN`).
    package static func extractPIN(mpinID: [UInt8], pin: Int32, clientSecret: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        try extractPIN(mpinID: mpinID, factors: .single(pin), clientSecret: clientSecret)
    }

    /// TOKEN = CS − k·A for the PIN factors' multiplier k (one PIN, or pin0 and pin1).
    static func extractPIN(mpinID: [UInt8], factors: borrowing PINFactors, clientSecret: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let cs = try G1Point(bytes: clientSecret)
        return try (cs - factors.times(identityPoint(mpinID: mpinID))).encoded()
    }

    /// CS = TOKEN + f(pin)·A, the inverse of `extractPIN`.
    package static func restorePIN(mpinID: [UInt8], pin: Int32, token: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let t = try G1Point(bytes: token)
        let pinPoint = identityPoint(mpinID: mpinID).multiplied(bySmall: pinMultiplier(pin), bits: pinBits)
        return try (t + pinPoint).encoded()
    }

    // MARK: Client (docs/CRYPTO.md §6)

    /// Client pass 1 (`MPIN_CLIENT_1`): SEC = TOKEN + f(pin)·A (+ TP when given), U = x·A and,
    /// when date ≠ 0, UT = x·(A + T). UT is nil when date = 0. A negative date throws.
    package static func client1(date: Int32, mpinID: [UInt8], x: [UInt8], pin: Int32, token: [UInt8],
                               timePermit: [UInt8]?) throws(MPinCryptoError) -> (u: [UInt8], ut: [UInt8]?, sec: [UInt8]) {
        try client1(date: date, mpinID: mpinID, x: x, factors: .single(pin), token: token, timePermit: timePermit)
    }

    /// Client pass 1 with SEC = TOKEN + k·A for the PIN factors' multiplier k.
    static func client1(date: Int32, mpinID: [UInt8], x: [UInt8], factors: borrowing PINFactors, token: [UInt8],
                        timePermit: [UInt8]?) throws(MPinCryptoError) -> (u: [UInt8], ut: [UInt8]?, sec: [UInt8]) {
        let xs = SecretScalar(try scalar(x))
        let hashedID = hashID(mpinID)
        let a = G1Point.map(hash: hashedID)
        var sec = try G1Point(bytes: token) + factors.times(a)
        var utPoint: G1Point? = nil
        if date != 0 {
            guard date > 0 else { throw .invalidDate }
            // As milagro-crypto-c: a missing permit skips only the addition to SEC.
            if let tp = timePermit { sec = sec + (try G1Point(bytes: tp)) }
            utPoint = (a + datePoint(date: date, hashedID: hashedID)).multiplied(by: xs.value)
        }
        let u = a.multiplied(by: xs.value)
        // One inversion for the two or three encodings.
        if let utPoint {
            let e = try G1Point.encoded([u, utPoint, sec])
            return (e[0], e[1], e[2])
        }
        let e = try G1Point.encoded([u, sec])
        return (e[0], nil, e[1])
    }

    /// Client pass 2 (`MPIN_CLIENT_2`): V = −((x + y) mod r)·SEC.
    package static func client2(x: [UInt8], y: [UInt8], sec: [UInt8]) throws(MPinCryptoError) -> [UInt8] {
        let point = try G1Point(bytes: sec)
        let k = SecretScalar(-(Fr(try scalar(x)) + Fr(try scalar(y))))
        return try point.multiplied(by: k.value.value).encoded()
    }

    /// One-pass client (`MPIN_CLIENT`): pass 1, then y = challenge(timeValue, UT or U ‖
    /// message), then pass 2. Returns U, UT and V (Milagro's SEC output holds V).
    package static func client(date: Int32, mpinID: [UInt8], x: [UInt8], pin: Int32, token: [UInt8],
                              timePermit: [UInt8]?, message: [UInt8] = [], timeValue: Int32)
        throws(MPinCryptoError) -> (u: [UInt8], ut: [UInt8]?, v: [UInt8], y: [UInt8]) {
        let (u, ut, sec) = try client1(date: date, mpinID: mpinID, x: x, pin: pin, token: token, timePermit: timePermit)
        let y = challenge(timeValue: timeValue, message: (ut ?? u) + message)
        return (u, ut, try client2(x: x, y: y, sec: sec), y)
    }

    // MARK: Server (docs/CRYPTO.md §7)

    /// Server pass 1 (`MPIN_SERVER_1`): HID = A and, when date ≠ 0, HTID = A + T.
    package static func server1(date: Int32, mpinID: [UInt8]) throws(MPinCryptoError) -> (hid: [UInt8], htid: [UInt8]?) {
        let hashedID = hashID(mpinID)
        let a = G1Point.map(hash: hashedID)
        guard date != 0 else { return (try a.encoded(), nil) }
        guard date > 0 else { throw .invalidDate }
        return (try a.encoded(), try (a + datePoint(date: date, hashedID: hashedID)).encoded())
    }

    /// Server pass 2 (`MPIN_SERVER_2`) from octets. Returns `.invalidPoint` when any point
    /// fails to decode (including a server secret outside G2), `.badPIN` when the pairing
    /// check fails, `.ok` when e(Q, V)·e(SS, y·P + R) = 1 with (P, R) = (HTID, UT) when
    /// date ≠ 0, else (HID, U).
    package static func server2(date: Int32, hid: [UInt8], htid: [UInt8]?, y: [UInt8], serverSecret: [UInt8],
                               u: [UInt8], ut: [UInt8]?, v: [UInt8]) -> ServerResult {
        guard let ss = try? G2Point(bytes: serverSecret) else { return .invalidPoint }
        return server2(date: date, hid: hid, htid: htid, y: y, serverSecret: ss, u: u, ut: ut, v: v)
    }

    /// Server pass 2 with an already decoded (and subgroup-checked) server secret, as a
    /// server that decodes its secret once at start-up calls it.
    package static func server2(date: Int32, hid: [UInt8], htid: [UInt8]?, y: [UInt8], serverSecret: G2Point,
                               u: [UInt8], ut: [UInt8]?, v: [UInt8]) -> ServerResult {
        server2(date: date, hid: hid, htid: htid, y: y, serverSecret: PreparedG2(oneShot: serverSecret), u: u, ut: ut, v: v)
    }

    /// MPIN_SERVER_2: e(Q, V)·e(sQ, P') == 1, with the server secret's Miller-loop lines
    /// computed once (`PreparedG2`), as a long-running server calls it.
    package static func server2(date: Int32, hid: [UInt8], htid: [UInt8]?, y: [UInt8], serverSecret: PreparedG2,
                               u: [UInt8], ut: [UInt8]?, v: [UInt8]) -> ServerResult {
        do throws(MPinCryptoError) {
            let p: G1Point, r: G1Point
            if date != 0 {
                guard let htid, let ut else { return .invalidPoint }
                p = try G1Point(bytes: htid)
                r = try G1Point(bytes: ut)
            } else {
                p = try G1Point(bytes: hid)
                r = try G1Point(bytes: u)
            }
            let vPoint = try G1Point(bytes: v)
            let ys = try scalar(y)
            let pPrime = p.multiplied(by: ys) + r
            if pPrime.isInfinity { return .badPIN }
            return Pairing.doublePairing(prepared: .generator, vPoint, prepared: serverSecret, pPrime).isOne ? .ok : .badPIN
        } catch {
            return .invalidPoint
        }
    }

    // MARK: Helpers

    static func scalar(_ bytes: [UInt8]) throws(MPinCryptoError) -> UInt256 {
        guard let v = UInt256(bigEndian: bytes) else { throw .invalidLength(expected: 32, got: bytes.count) }
        return v
    }

    static func requireLength(_ bytes: [UInt8], _ n: Int) throws(MPinCryptoError) {
        guard bytes.count == n else { throw .invalidLength(expected: n, got: bytes.count) }
    }

    static func bigEndian32(_ v: Int32) -> [UInt8] {
        let u = UInt32(bitPattern: v)
        return [UInt8(u >> 24), UInt8(truncatingIfNeeded: u >> 16), UInt8(truncatingIfNeeded: u >> 8), UInt8(truncatingIfNeeded: u)]
    }
}
