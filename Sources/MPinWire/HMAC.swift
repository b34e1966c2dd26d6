import MPinCrypto

/// HMAC-SHA256 (RFC 2104) over MPinCrypto's SHA-256.
package enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    package static func code(key: some Sequence<UInt8>, message: some Sequence<UInt8>) -> [UInt8] {
        var k = Array(key)
        if k.count > 64 { k = SHA256.hash(k) }
        k += [UInt8](repeating: 0, count: 64 - k.count)
        var inner = SHA256()
        inner.update(k.map { $0 ^ 0x36 })
        inner.update(message)
        let innerDigest = inner.finalize()
        var outer = SHA256()
        outer.update(k.map { $0 ^ 0x5C })
        outer.update(innerDigest)
        return outer.finalize()
    }
}

/// The RPS ↔ D-TA signatures of docs/PROTOCOL.md §2.4: `hex(HMAC-SHA256(app_key, message))`,
/// where the message is a plain concatenation of strings.
package enum WireSignature {
    /// `signMessage(msg, key)`: lower-case hex HMAC of the UTF-8 message.
    package static func sign(_ message: String, key: String) -> String {
        Hex.encode(HMACSHA256.code(key: Array(key.utf8), message: Array(message.utf8)))
    }

    /// Message of a server-secret share request.
    package static func serverSecretMessage(appID: String, expires: String) -> String {
        "serverSecret" + appID + expires
    }

    /// Message of a client-secret share request; `hashUserID` is empty in practice.
    package static func clientSecretMessage(appID: String, hashMpinID: String, hashUserID: String = "",
                                           expires: String) -> String {
        "clientSecret" + appID + hashMpinID + hashUserID + expires
    }

    /// Message of the activation key given to the RPA.
    package static func activationMessage(mpinIDHex: String, regOTT: String) -> String { mpinIDHex + regOTT }

    /// Checks `received` against the expected signature of `message` without an early-exit
    /// comparison: both are MACed again and the MACs compared in constant time, as the
    /// original D-TA does.
    package static func verify(_ received: String, message: String, key: String) -> Bool {
        let expected = sign(message, key: key)
        let nonce = Array(key.utf8) + [0x01]
        let a = HMACSHA256.code(key: nonce, message: Array(expected.utf8))
        let b = HMACSHA256.code(key: nonce, message: Array(received.lowercased().utf8))
        return constantTimeEqual(a, b)
    }

    /// Byte equality whose running time depends only on the lengths.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
