import MPinClient
import MPinCrypto

/// HMAC-SHA-256 (RFC 2104) and PBKDF2 with it (RFC 8018 §5.2), for offline logins: the sealed
/// object's authorisation value from the PIN, and the MAC over a user's offline record.
enum OfflineKey {
    /// PBKDF2's iterations: about a tenth of a second here (docs/PERFORMANCE.md, "Offline
    /// logins"). The TPM's dictionary-attack protection is what limits guesses; this makes a
    /// guess cost something even where the TPM's own protection were bypassed.
    static let iterations = 100_000
    static let label = Array("mpin-pam offline login 1".utf8)

    /// The authorisation value of a user's sealed object: PBKDF2-HMAC-SHA-256 of the PIN, salted
    /// with the label, the identity (so that two users' values differ even with one PIN and
    /// salt) and the record's random salt. 32 bytes (the object's name algorithm's size).
    static func authorisation(pin: borrowing SecretBytes, identity: String, salt: [UInt8], iterations: Int = iterations) -> SecretBytes {
        var s = label
        appendLengthPrefixed(&s, Array(identity.utf8))
        appendLengthPrefixed(&s, salt)
        var derived = pin.withUnsafeBytes { p in pbkdf2(password: p, salt: s, iterations: iterations) }
        return SecretBytes(taking: &derived)
    }

    static func appendLengthPrefixed(_ out: inout [UInt8], _ bytes: [UInt8]) {
        let n = UInt32(bytes.count)
        out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
        out += bytes
    }

    /// One 32-byte block of PBKDF2 (all an authorisation value needs); the caller wipes it.
    static func pbkdf2(password: UnsafeRawBufferPointer, salt: [UInt8], iterations: Int) -> [UInt8] {
        var mac = HMAC(key: password)
        var u = mac.authenticate(salt + [0, 0, 0, 1])
        var t = u
        for _ in 1..<max(iterations, 1) {
            let next = mac.authenticate(u)
            u.wipe()
            u = next
            for i in 0..<t.count { t[i] ^= u[i] }
        }
        u.wipe()
        mac.wipe()
        return t
    }

    /// HMAC-SHA-256 of `message` under `key`.
    static func mac(key: borrowing SecretBytes, _ message: [UInt8]) -> [UInt8] {
        key.withUnsafeBytes { k in
            var h = HMAC(key: k)
            defer { h.wipe() }
            return h.authenticate(message)
        }
    }

    /// Equal without an early exit (a MAC compared with the stored one).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    /// HMAC with the padded key's two blocks hashed once: each message then costs two
    /// compressions of its own, which is what makes PBKDF2's loop affordable.
    struct HMAC {
        private var inner = SHA256()
        private var outer = SHA256()
        private var padded: [UInt8]

        init(key: UnsafeRawBufferPointer) {
            padded = [UInt8](repeating: 0, count: 64)
            if key.count > 64 {
                var digest = SHA256.hash(key)
                for i in 0..<32 { padded[i] = digest[i] }
                digest.wipe()
            } else {
                for i in 0..<key.count { padded[i] = key[i] }
            }
            var pad = padded.map { $0 ^ 0x36 }
            inner.update(pad)
            pad.wipe()
            pad = padded.map { $0 ^ 0x5C }
            outer.update(pad)
            pad.wipe()
        }

        func authenticate(_ message: [UInt8]) -> [UInt8] {
            var i = inner
            i.update(message)
            var digest = i.finalize()
            var o = outer
            o.update(digest)
            digest.wipe()
            return o.finalize()
        }

        mutating func wipe() {
            padded.wipe()
            inner = SHA256()
            outer = SHA256()
        }
    }
}
