#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SHA-256 (FIPS 180-4), the only hash M-Pin on BN254CX uses. Self-contained so that the
/// crypto module has no dependencies; tests check it against OpenSSL.
package struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    private var buffer = [UInt8]()
    private var length: UInt64 = 0

    package init() { buffer.reserveCapacity(64) }

    /// The digest of `data` in one call.
    package static func hash(_ data: some Sequence<UInt8>) -> [UInt8] {
        var h = SHA256()
        h.update(data)
        return h.finalize()
    }

    /// Contiguous input (arrays, slices, native strings' UTF-8) is compressed straight from its
    /// memory, a block at a time; only a partial block is copied into `buffer`. The server
    /// hashes every mpinId and authOTT it handles (docs/PERFORMANCE.md §2.2: byte-by-byte appends
    /// and a schedule array per block made each hash cost several microseconds).
    package mutating func update(_ data: some Sequence<UInt8>) {
        let done: Void? = data.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        guard done == nil else { return }
        for byte in data { update(byte) }
    }

    private mutating func update(_ byte: UInt8) {
        buffer.append(byte)
        length &+= 1
        if buffer.count == 64 { compressBuffer() }
    }

    private mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        length &+= UInt64(left)
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, left)
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            base += take; left -= take
            guard buffer.count == 64 else { return }
            compressBuffer()
        }
        while left >= 64 {
            compress(base)
            base += 64; left -= 64
        }
        if left > 0 { buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: left)) }
    }

    private mutating func compressBuffer() {
        buffer.withUnsafeBytes { compress($0.baseAddress!) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// The 32-byte digest. The hasher should not be used afterwards.
    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        buffer.append(0x80)
        if buffer.count > 56 {
            buffer.append(contentsOf: repeatElement(0, count: 64 - buffer.count))
            compressBuffer()
        }
        buffer.append(contentsOf: repeatElement(0, count: 56 - buffer.count))
        for i in stride(from: 56, through: 0, by: -8) { buffer.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(i))) }
        buffer.withUnsafeBytes { compress($0.baseAddress!) }
        // The buffer held the message's last block, which may be a secret (docs/MFA.md §10 hashes
        // pin1): wipe it before its memory is released.
        buffer.wipe()
        buffer.removeAll()
        return withUnsafeBytes(of: state) { words in
            [UInt8](unsafeUninitializedCapacity: 32) { out, count in
                for i in 0..<8 {
                    let w = words.load(fromByteOffset: 4 * i, as: UInt32.self).bigEndian
                    withUnsafeBytes(of: w) { for j in 0..<4 { out[4 * i + j] = $0[j] } }
                }
                count = 32
            }
        }
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }

    /// One 64-byte block at `block`. The message schedule lives on the stack and is wiped.
    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
            for i in 16..<64 {
                let s0 = Self.rotr(w[i - 15], 7) ^ Self.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = Self.rotr(w[i - 2], 17) ^ Self.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            Self.k.withUnsafeBufferPointer { k in
                for i in 0..<64 {
                    let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                    let ch = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                    let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                    let maj = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ maj
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                }
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
            // The schedule's first 16 words are the block itself.
            explicit_bzero(UnsafeMutableRawPointer(w.baseAddress!), 64 * MemoryLayout<UInt32>.stride)
        }
    }
}
