import MPinCrypto

/// A host's credential for access numbers (PROTOCOL.md §5.8, an mpin-server extension): the
/// server tells hosts apart by a Schnorr key each host made for itself, not by an address or a
/// description a remote client chooses.
///
/// - The host signs each `getAccessNumber` with its key, over the time (ms since the epoch),
///   the description and the verdict nonce, so that a signature is good for this request only
///   and for a minute; the server remembers the signatures it counted until they go stale.
/// - A key counts as a host's only with a certificate from the server: the server's verdict key
///   signs the host key, with an expiry, when the host completes a login a device approved
///   (the private `/authenticate` with the number's webOTT). A made-up key has none, so its
///   requests share the anonymous bucket, and it cannot spend a real host's bucket (it cannot
///   sign with that host's key).
///
/// Signed bytes are a tag, then length-prefixed fields (4-byte big-endian lengths).
package enum HostCredential {
    /// How far a request's time may be from the server's clock, in seconds.
    package static let freshnessSeconds = 60
    /// How long a certificate is good for; each approved login renews it.
    package static let certificateLifetimeSeconds = 30 * 86_400

    static func message(_ tag: String, _ fields: [[UInt8]]) -> [UInt8] {
        var out = Array(tag.utf8)
        for field in fields {
            let n = UInt32(truncatingIfNeeded: field.count)
            out += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            out += field
        }
        return out
    }

    /// Longest `hostUser`, in UTF-8 bytes.
    package static let maxUserBytes = 256

    /// What a host signs when it asks for an access number.
    package static func requestMessage(hostKey: [UInt8], timeMillis: Int, user: String, description: String,
                                      verdictNonce: String) -> [UInt8] {
        message("mpin-host-request-v1", [hostKey, Array(String(timeMillis).utf8), Array(user.utf8), Array(description.utf8),
                                         Array(verdictNonce.utf8)])
    }

    /// What the server signs in a certificate.
    package static func certificateMessage(hostKey: [UInt8], expires: Int) -> [UInt8] {
        message("mpin-host-certificate-v1", [hostKey, Array(String(expires).utf8)])
    }

    /// `request` with the host's key, the time, the local `user` the login is for (the server
    /// counts per host key and user) and the signature over them (nothing else of the request
    /// changes). `certificate` is the one kept for this backend, or empty.
    package static func signed(_ request: AccessNumberRequest, secretKey: [UInt8], publicKey: [UInt8], certificate: String,
                              user: String, timeMillis: Int) throws(MPinCryptoError) -> AccessNumberRequest {
        var r = request
        let m = requestMessage(hostKey: publicKey, timeMillis: timeMillis, user: user, description: request.description ?? "",
                               verdictNonce: request.verdictNonce ?? "")
        r.hostKey = Hex.encode(publicKey)
        r.hostTime = timeMillis
        r.hostUser = user
        r.hostSignature = Hex.encode(try Schnorr.sign(m, secretKey: secretKey))
        r.hostCertificate = certificate.isEmpty ? nil : certificate
        return r
    }

    /// A certificate: the expiry (seconds since the epoch, decimal), `.`, the signature (hex).
    package static func certificate(hostKey: [UInt8], expires: Int, secretKey: [UInt8]) throws(MPinCryptoError) -> String {
        String(expires) + "." + Hex.encode(try Schnorr.sign(certificateMessage(hostKey: hostKey, expires: expires), secretKey: secretKey))
    }

    /// The expiry of `certificate` when `serverKey` signed it for `hostKey` and it has not
    /// expired at `now` (seconds); nil otherwise.
    package static func certificateExpiry(_ certificate: String, hostKey: [UInt8], serverKey: [UInt8], now: Int) -> Int? {
        let parts = certificate.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 12, let expires = Int(String(decoding: parts[0], as: UTF8.self)), expires > now,
              parts[1].count == 2 * Schnorr.signatureSize, let signature = Hex.decode(String(decoding: parts[1], as: UTF8.self)),
              Schnorr.verify(signature, message: certificateMessage(hostKey: hostKey, expires: expires), publicKey: serverKey)
        else { return nil }
        return expires
    }

    /// Whether `request` carries a valid signature by the key it names, made within
    /// `freshnessSeconds` of `nowMillis`.
    package static func verifySignature(_ request: AccessNumberRequest, hostKey: [UInt8], nowMillis: Int) -> Bool {
        guard let time = request.hostTime, let user = request.hostUser, user.utf8.count <= maxUserBytes,
              let sigHex = request.hostSignature, sigHex.utf8.count == 2 * Schnorr.signatureSize,
              let signature = Hex.decode(sigHex),
              abs(Double(time) - Double(nowMillis)) <= Double(freshnessSeconds * 1000) else { return false }
        return Schnorr.verify(signature, message: requestMessage(hostKey: hostKey, timeMillis: time, user: user,
                                                                 description: request.description ?? "",
                                                                 verdictNonce: request.verdictNonce ?? ""),
                              publicKey: hostKey)
    }

    /// A host key from hex: a valid public key's 65-byte encoding, or nil.
    package static func publicKey(fromHex hex: String?) -> [UInt8]? {
        guard let hex, hex.utf8.count == 2 * G1Point.encodedSize, let bytes = Hex.decode(hex),
              (try? G1Point(bytes: bytes)) != nil else { return nil }
        return bytes
    }
}
