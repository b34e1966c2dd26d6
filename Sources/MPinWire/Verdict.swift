import MPinCrypto

/// A signed verdict (docs/PROTOCOL.md §4.5.1, an mpin-server extension): the final answer of a
/// login, signed by the server over a nonce the host drew for this login, so that a host
/// believes "OK" (or "blocked", which makes it delete its token) only from the server whose key
/// it pinned at registration, whoever answers on the backend's address.
///
/// The signed bytes are the tag, then four length-prefixed fields (4-byte big-endian lengths):
/// the nonce, the mpinId's bytes, the user id (UTF-8) and the HTTP status as decimal text. The
/// host rebuilds them from what it knows (its nonce, the registration's mpinId and user id, the
/// status it got), so a signature over any other login, user or outcome does not verify.
public enum Verdict {
    /// Bytes of a nonce: as many as a SHA-256 value.
    public static let nonceSize = 32

    public static func message(nonce: [UInt8], mpinID: [UInt8], userID: String, status: Int) -> [UInt8] {
        var out = Array("mpin-verdict-v1".utf8)
        for field in [nonce, mpinID, Array(userID.utf8), Array(String(status).utf8)] {
            let n = UInt32(truncatingIfNeeded: field.count)
            out += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            out += field
        }
        return out
    }

    /// The signature (hex) the server sends.
    public static func sign(nonce: [UInt8], mpinID: [UInt8], userID: String, status: Int,
                            secretKey: [UInt8]) throws(MPinCryptoError) -> String {
        Hex.encode(try Schnorr.sign(message(nonce: nonce, mpinID: mpinID, userID: userID, status: status), secretKey: secretKey))
    }

    /// Whether `signatureHex` is the pinned key's signature of this verdict.
    public static func verify(_ signatureHex: String?, publicKeyHex: String, nonce: [UInt8], mpinID: [UInt8],
                              userID: String, status: Int) -> Bool {
        guard let signatureHex, let signature = Hex.decode(signatureHex), let key = Hex.decode(publicKeyHex) else { return false }
        return Schnorr.verify(signature, message: message(nonce: nonce, mpinID: mpinID, userID: userID, status: status),
                              publicKey: key)
    }

    /// A nonce from a request: 32 bytes of hex, or nil (absent or malformed: no signature).
    public static func nonce(fromHex hex: String?) -> [UInt8]? {
        guard let hex, hex.utf8.count == 2 * nonceSize, let bytes = Hex.decode(hex), bytes.count == nonceSize else { return nil }
        return bytes
    }

    /// Whether `hex` is a usable public key (a G1 point), as a host checks before pinning it.
    public static func isPublicKey(_ hex: String) -> Bool {
        guard let bytes = Hex.decode(hex) else { return false }
        return (try? G1Point(bytes: bytes)) != nil
    }
}
