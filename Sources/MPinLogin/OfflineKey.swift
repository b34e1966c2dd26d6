import MPinClient
import MPinCrypto
#if canImport(Glibc)
import Glibc
#endif

/// HMAC-SHA-256 (RFC 2104) and PBKDF2 with it (RFC 8018 §5.2), for offline logins: the sealed
/// object's authorisation value from the PIN, and the MAC over a user's offline record.
package enum OfflineKey {
    /// PBKDF2's iterations: about a tenth of a second here (docs/PERFORMANCE.md, "Offline
    /// logins"). The TPM's dictionary-attack protection is what limits guesses; this makes a
    /// guess cost something even where the TPM's own protection were bypassed.
    package static let iterations = 100_000
    static let label = Array("mpin-pam offline login 1".utf8)

    /// The authorisation value of a user's sealed object: PBKDF2-HMAC-SHA-256 of the PIN, salted
    /// with the label, the identity (so that two users' values differ even with one PIN and
    /// salt) and the record's random salt. 32 bytes (the object's name algorithm's size).
    package static func authorisation(pin: borrowing SecretBytes, identity: String, salt: [UInt8], iterations: Int = iterations) -> SecretBytes {
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
    package static func pbkdf2(password: UnsafeRawBufferPointer, salt: [UInt8], iterations: Int) -> [UInt8] {
        var mac = HMAC(key: password)
        var u = mac.authenticate(salt + [0, 0, 0, 1])
        var t = u
        // The loop's messages are all 32 bytes: PBKDF2Loop hashes them with no allocation, two
        // compressions an iteration, from the key's two padded blocks hashed once.
        var loop = PBKDF2Loop(key: password)
        loop.run(first: &u, into: &t, iterations: max(iterations, 1) - 1)
        u.wipe()
        mac.wipe()
        return t
    }

    /// HMAC-SHA-256 of `message` under `key`.
    package static func mac(key: borrowing SecretBytes, _ message: [UInt8]) -> [UInt8] {
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

    /// PBKDF2's inner loop for HMAC-SHA-256 with 32-byte messages, on the stack: SHA-256's
    /// compression (FIPS 180-4 §6.2) of the one block such a message fills (the message, 0x80,
    /// zeros, the bit length of a 64-byte pad block plus 32 bytes), from the states after the
    /// key's inner and outer pad blocks. MPinCrypto's SHA256 computes the same digests (the
    /// unit tests check PBKDF2 against published vectors) but allocates for each, which made a
    /// hundred thousand iterations cost a second.
    struct PBKDF2Loop {
        typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
        static let initial: State = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
        static let k: [UInt32] = [
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
            0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
            0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
            0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
            0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
            0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
            0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
        ]

        var inner: State
        var outer: State

        init(key: UnsafeRawBufferPointer) {
            var padded = [UInt8](repeating: 0, count: 64)
            if key.count > 64 {
                var digest = SHA256.hash(key)
                for i in 0..<32 { padded[i] = digest[i] }
                digest.wipe()
            } else {
                for i in 0..<key.count { padded[i] = key[i] }
            }
            var block = [UInt32](repeating: 0, count: 16)
            func words(_ x: UInt8) {
                for i in 0..<16 {
                    block[i] = UInt32(padded[4 * i] ^ x) << 24 | UInt32(padded[4 * i + 1] ^ x) << 16
                        | UInt32(padded[4 * i + 2] ^ x) << 8 | UInt32(padded[4 * i + 3] ^ x)
                }
            }
            inner = Self.initial
            outer = Self.initial
            words(0x36)
            block.withUnsafeBufferPointer { Self.compress(&inner, $0.baseAddress!) }
            words(0x5C)
            block.withUnsafeBufferPointer { Self.compress(&outer, $0.baseAddress!) }
            block.withUnsafeMutableBytes { explicit_bzero($0.baseAddress!, $0.count) }
            padded.wipe()
        }

        /// `iterations` more rounds from `u` (the first U): each U is XORed into `t`.
        mutating func run(first u: inout [UInt8], into t: inout [UInt8], iterations: Int) {
            guard iterations > 0 else { return }
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { block in
                // The padding of a 32-byte message after one 64-byte block: 0x80, zeros, 768 bits.
                for i in 8..<16 { block[i] = 0 }
                block[8] = 0x8000_0000
                block[15] = 768
                var acc = (UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0))
                var cur = acc
                for i in 0..<8 {
                    let w = UInt32(u[4 * i]) << 24 | UInt32(u[4 * i + 1]) << 16 | UInt32(u[4 * i + 2]) << 8 | UInt32(u[4 * i + 3])
                    Self.set(&cur, i, w)
                    Self.set(&acc, i, UInt32(t[4 * i]) << 24 | UInt32(t[4 * i + 1]) << 16 | UInt32(t[4 * i + 2]) << 8 | UInt32(t[4 * i + 3]))
                }
                for _ in 0..<iterations {
                    var h = inner
                    Self.load(cur, into: block)
                    Self.compress(&h, UnsafePointer(block.baseAddress!))
                    var o = outer
                    Self.load(h, into: block)
                    Self.compress(&o, UnsafePointer(block.baseAddress!))
                    cur = o
                    acc = (acc.0 ^ o.0, acc.1 ^ o.1, acc.2 ^ o.2, acc.3 ^ o.3, acc.4 ^ o.4, acc.5 ^ o.5, acc.6 ^ o.6, acc.7 ^ o.7)
                }
                for i in 0..<8 {
                    let w = Self.get(acc, i)
                    t[4 * i] = UInt8(w >> 24); t[4 * i + 1] = UInt8(w >> 16 & 0xFF)
                    t[4 * i + 2] = UInt8(w >> 8 & 0xFF); t[4 * i + 3] = UInt8(w & 0xFF)
                }
                cur = (0, 0, 0, 0, 0, 0, 0, 0)
                acc = cur
                explicit_bzero(UnsafeMutableRawPointer(block.baseAddress!), 16 * MemoryLayout<UInt32>.stride)
            }
        }

        mutating func wipe() {
            inner = (0, 0, 0, 0, 0, 0, 0, 0)
            outer = inner
        }

        @inline(__always) static func load(_ s: State, into block: UnsafeMutableBufferPointer<UInt32>) {
            block[0] = s.0; block[1] = s.1; block[2] = s.2; block[3] = s.3
            block[4] = s.4; block[5] = s.5; block[6] = s.6; block[7] = s.7
        }

        @inline(__always) static func get(_ s: State, _ i: Int) -> UInt32 {
            switch i { case 0: s.0; case 1: s.1; case 2: s.2; case 3: s.3; case 4: s.4; case 5: s.5; case 6: s.6; default: s.7 }
        }

        @inline(__always) static func set(_ s: inout State, _ i: Int, _ v: UInt32) {
            switch i { case 0: s.0 = v; case 1: s.1 = v; case 2: s.2 = v; case 3: s.3 = v; case 4: s.4 = v; case 5: s.5 = v; case 6: s.6 = v; default: s.7 = v }
        }

        @inline(__always) static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }

        /// One block of sixteen big-endian words into `state`.
        static func compress(_ state: inout State, _ block: UnsafePointer<UInt32>) {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for i in 0..<16 { w[i] = block[i] }
                for i in 16..<64 {
                    let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                    let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                    w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = state
                k.withUnsafeBufferPointer { k in
                    for i in 0..<64 {
                        let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                        let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    }
                }
                state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
                explicit_bzero(UnsafeMutableRawPointer(w.baseAddress!), 64 * MemoryLayout<UInt32>.stride)
            }
        }
    }
}
