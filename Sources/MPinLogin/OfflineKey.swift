import CTPMShim
import MPinClient
import MPinCrypto

/// HMAC-SHA-256 (RFC 2104) and PBKDF2 with it (RFC 8018 §5.2), for offline logins: the sealed
/// object's authorisation value from the PIN, and the MAC over a user's offline record. Both
/// are OpenSSL's libcrypto's, loaded only when an offline login needs them
/// (CTPMShim/mpin_offline_crypto.h).
package enum OfflineKey {
    /// libcrypto could not be loaded or failed; says which, never a secret.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// PBKDF2's iterations: about a tenth of a second here (docs/PERFORMANCE.md, "Offline
    /// logins"). The TPM's dictionary-attack protection is what limits guesses; this makes a
    /// guess cost something even where the TPM's own protection were bypassed.
    package static let iterations = 100_000
    static let label = Array("mpin-pam offline login 1".utf8)

    /// The authorisation value of a user's sealed object: PBKDF2-HMAC-SHA-256 of the PIN, salted
    /// with the label, the identity (so that two users' values differ even with one PIN and
    /// salt) and the record's random salt. 32 bytes (the object's name algorithm's size).
    package static func authorisation(pin: borrowing SecretBytes, identity: String, salt: [UInt8],
                                      iterations: Int = iterations) throws(Failure) -> SecretBytes {
        var s = label
        appendLengthPrefixed(&s, Array(identity.utf8))
        appendLengthPrefixed(&s, salt)
        // The derived bytes live in one array only, which SecretBytes takes and wipes.
        var bytes: [UInt8] = []
        var failure: Failure? = nil
        pin.withUnsafeBytes { p in
            do throws(Failure) { bytes = try pbkdf2(password: p, salt: s, iterations: iterations) } catch { failure = error }
        }
        if let failure { throw failure }
        return SecretBytes(taking: &bytes)
    }

    static func appendLengthPrefixed(_ out: inout [UInt8], _ bytes: [UInt8]) {
        let n = UInt32(bytes.count)
        out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
        out += bytes
    }

    /// One 32-byte block of PBKDF2 (all an authorisation value needs); the caller wipes it.
    package static func pbkdf2(password: UnsafeRawBufferPointer, salt: [UInt8], iterations: Int) throws(Failure) -> [UInt8] {
        guard iterations > 0, iterations <= Int(Int32.max) else { throw Failure(description: "PBKDF2 iterations out of range") }
        var out = [UInt8](repeating: 0, count: 32)
        var why = [CChar](repeating: 0, count: 200)
        let rc = out.withUnsafeMutableBufferPointer { o in
            mpin_offline_pbkdf2_sha256(password.baseAddress?.assumingMemoryBound(to: UInt8.self), password.count, salt, salt.count,
                                       UInt32(iterations), o.baseAddress, &why, why.count)
        }
        guard rc == 0 else { throw Failure(description: Self.text(why)) }
        return out
    }

    /// HMAC-SHA-256 of `message` under `key`.
    package static func mac(key: borrowing SecretBytes, _ message: [UInt8]) throws(Failure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var why = [CChar](repeating: 0, count: 200)
        let rc = key.withUnsafeBytes { k in
            out.withUnsafeMutableBufferPointer { o in
                mpin_offline_hmac_sha256(k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count, message, message.count,
                                         o.baseAddress, &why, why.count)
            }
        }
        guard rc == 0 else { throw Failure(description: Self.text(why)) }
        return out
    }

    /// Equal without an early exit (a MAC compared with the stored one).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    private static func text(_ why: [CChar]) -> String {
        String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
