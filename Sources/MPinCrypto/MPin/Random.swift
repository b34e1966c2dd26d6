#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Randomness from the operating system's CSPRNG (getrandom(2) through getentropy(3)).
package enum SystemRandom {
    /// Fills `count` bytes from the kernel CSPRNG. Blocks only until the pool is seeded at boot.
    package static func bytes(_ count: Int) throws(MPinCryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            // getentropy(3) wraps getrandom(2) and is exported by glibc's unistd.h;
            // it takes at most 256 bytes per call.
            let chunk = min(256, count - filled)
            let n = out.withUnsafeMutableBytes { buf -> Int in
                getentropy(buf.baseAddress! + filled, chunk) == 0 ? chunk : -1
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .randomnessUnavailable
            }
            filled += n
        }
        return out
    }

    /// A uniform scalar in [0, r), as Milagro's `MPIN_RANDOM_GENERATE` (512 random bits
    /// reduced mod r, so the bias is below 2^-250). 32 big-endian bytes.
    package static func scalar() throws(MPinCryptoError) -> [UInt8] {
        var raw = try bytes(64)
        defer { raw.wipe() }
        let hi = Fr(UInt256(bigEndian: raw[0..<32])!)
        let lo = Fr(UInt256(bigEndian: raw[32..<64])!)
        // hi·2^256 + lo (mod r); 2^256 mod r is Fr's Montgomery constant R.
        let twoTo256 = Fr(BN254ScalarModulus.rModM)
        return (hi * twoTo256 + lo).bytes
    }
}

extension Array where Element == UInt8 {
    /// Overwrites every byte with zero (explicit_bzero: the writes cannot be optimised away),
    /// for buffers that held a PIN, token, secret share or random scalar.
    @inline(never)
    package mutating func wipe() {
        withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }
}
