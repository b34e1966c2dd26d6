/// Hexadecimal as the protocol uses it: lower case on output (docs/PROTOCOL.md conventions),
/// either case accepted on input.
package enum Hex {
    /// Lower-case hex of `bytes`, two characters per byte, no prefix.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        // Contiguous bytes (arrays, the server's every point and token) are read through a
        // pointer: this function is not specialised across modules, and a byte at a time
        // through the generic iterator cost ~1 % of the server's CPU per login
        // (docs/PERFORMANCE.md §2.2).
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: buffer.count * 2) { out in
            for (i, b) in buffer.enumerated() {
                out[2 * i] = digit(b >> 4)
                out[2 * i + 1] = digit(b & 0x0F)
            }
            return buffer.count * 2
        }
    }

    /// The lower-case digit of a nibble, without a branch or a table indexed by it (tokens and
    /// keys are written in hex): 39 more than "0" + n past 9, where "a" starts.
    @inline(__always) private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble &+ UInt8(ascii: "0") &+ 39 &* ((9 &- nibble) >> 7)
    }

    /// The bytes of a hex string in either case, or nil when the length is odd or a
    /// character is not a hex digit. The empty string decodes to no bytes.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let bytes = text.utf8.withContiguousStorageIfAvailable({ decode(utf8: $0) }) { return bytes }
        return Array(text.utf8).withUnsafeBufferPointer { decode(utf8: $0) }
    }

    private static func decode(utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = value(utf8[i]), let lo = value(utf8[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// Decodes and checks the byte length (e.g. 65 for a G1 point, 32 for a scalar).
    package static func decode(_ text: some StringProtocol, length: Int) -> [UInt8]? {
        guard text.utf8.count == length * 2, let bytes = decode(text) else { return nil }
        return bytes
    }

    /// The lower-case form of a hex string, or nil when it is not valid hex.
    /// Used to key server-side records so that either case finds the same one.
    package static func canonical(_ text: some StringProtocol) -> String? {
        decode(text).map { encode($0) }
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
