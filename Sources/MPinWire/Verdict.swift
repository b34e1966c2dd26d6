import MPinCrypto

/// A signed verdict (docs/PROTOCOL.md §4.5.1, an mpin-server extension): the final answer of a
/// login, signed by the server over a nonce the host drew for this login, so that a host
/// believes "OK" (or "blocked", which makes it delete its token) only from the server whose key
/// it pinned at registration, whoever answers on the backend's address.
///
/// The nonce is bound to the proof, not to the request that asks for the verdict: in token mode
/// the host sends it with pass 2 and the server puts it into the authOTT it returns (the
/// pass-2 record is found by the whole authOTT's hash, so nobody can change the nonce in it);
/// in device mode the host sends it with its request for an access number and the server puts
/// it into the webOTT, which the host presents with the final step. A verdict captured from
/// another login therefore carries that login's nonce, whoever replays it and wherever.
///
/// The signed bytes are the tag, then five length-prefixed fields (4-byte big-endian
/// lengths): the nonce, the mpinId's bytes, the user id (UTF-8), the HTTP status as decimal
/// text, and the context: `token`, or for device mode `device`, the access number and the
/// requester's description, separated by newlines. The host rebuilds them from what it knows,
/// so a signature over any other login, user, outcome or mode does not verify.
package enum Verdict {
    /// Bytes of a nonce: as many as a SHA-256 value.
    package static let nonceSize = 32
    /// Random bytes before the nonce in an authOTT or webOTT that carries one.
    package static let ottRandomSize = 16

    /// The context of a token-mode verdict.
    package static let tokenContext = "token"

    /// The context of the time-permit step's "revoked" (HTTP 410): the host sends its nonce as
    /// the `verdictNonce` query parameter of the time-permit request, and records the identity
    /// as revoked only when the answer carries this signature (a host keeps nothing from an
    /// answer it cannot authenticate, docs/SECURITY.md §3).
    package static let revokedContext = "revoked"

    /// The context of the signature over a wrong PIN's `attemptsLeft` (HTTP 401): how many wrong
    /// PINs the identity may still take before it is blocked, as the server counted after this
    /// one. Signed apart from the verdict, so that a host which does not read the count still
    /// verifies the verdict as before; a count without this signature is not shown.
    package static func attemptsLeftContext(_ left: Int) -> String { "attempts-left\n" + String(left) }

    /// The context of a success's acknowledgment of a host's offline-login report (§4.5.2):
    /// how many of its logins were new to the server. Signed apart from the verdict; a host
    /// forgets the logins it reported only with this signature over its own nonce.
    package static func offlineLoginsRecordedContext(_ recorded: Int) -> String { "offline-logins-recorded\n" + String(recorded) }

    /// The query parameter that carries a host's nonce on a request without a body.
    package static let nonceParameter = "verdictNonce"

    /// The context of a device-mode verdict: the access number and what asked for it.
    package static func deviceContext(accessNumber: String, description: String) -> String {
        "device\n" + accessNumber + "\n" + description
    }

    package static func message(nonce: [UInt8], mpinID: [UInt8], userID: String, status: Int, context: String) -> [UInt8] {
        var out = Array("mpin-verdict-v1".utf8)
        for field in [nonce, mpinID, Array(userID.utf8), Array(String(status).utf8), Array(context.utf8)] {
            let n = UInt32(truncatingIfNeeded: field.count)
            out += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            out += field
        }
        return out
    }

    /// The signature (hex) the server sends.
    package static func sign(nonce: [UInt8], mpinID: [UInt8], userID: String, status: Int, context: String,
                            secretKey: [UInt8]) throws(MPinCryptoError) -> String {
        Hex.encode(try Schnorr.sign(message(nonce: nonce, mpinID: mpinID, userID: userID, status: status, context: context),
                                    secretKey: secretKey))
    }

    /// Whether `signatureHex` is the pinned key's signature of this verdict.
    package static func verify(_ signatureHex: String?, publicKeyHex: String, nonce: [UInt8], mpinID: [UInt8],
                              userID: String, status: Int, context: String) -> Bool {
        guard let signatureHex, let signature = Hex.decode(signatureHex), let key = Hex.decode(publicKeyHex) else { return false }
        return Schnorr.verify(signature, message: message(nonce: nonce, mpinID: mpinID, userID: userID, status: status,
                                                          context: context),
                              publicKey: key)
    }

    /// A nonce from a request: 32 bytes of hex, or nil (absent or malformed: no signature).
    package static func nonce(fromHex hex: String?) -> [UInt8]? {
        guard let hex, hex.utf8.count == 2 * nonceSize, let bytes = Hex.decode(hex), bytes.count == nonceSize else { return nil }
        return bytes
    }

    /// A one-time token (authOTT, webOTT) that carries `nonce`: 16 random bytes, then the nonce,
    /// as hex; 16 random bytes alone without a nonce (as the original server issues them).
    package static func oneTimeToken(random: [UInt8], nonce: [UInt8]?) -> String {
        Hex.encode(random + (nonce ?? []))
    }

    /// The nonce a one-time token carries, or nil.
    package static func nonce(inOneTimeToken hex: String) -> [UInt8]? {
        guard hex.utf8.count == 2 * (ottRandomSize + nonceSize), let bytes = Hex.decode(hex) else { return nil }
        return Array(bytes[ottRandomSize...])
    }

    /// Whether `hex` is a usable public key (a G1 point), as a host checks before pinning it.
    package static func isPublicKey(_ hex: String) -> Bool {
        guard let bytes = Hex.decode(hex) else { return false }
        return (try? G1Point(bytes: bytes)) != nil
    }
}
