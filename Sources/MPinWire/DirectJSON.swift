import MPinJSON

/// A message with a fixed, flat shape that writes its own JSON (`JSONObjectWriter`): the same
/// bytes as `WireCoding.encode`, without the generic encoder's tree. The server answers the
/// three requests of every login with these (docs/PERFORMANCE.md §2.2); WireCodingTests compares the
/// bytes with `WireCoding.encode`'s.
package protocol DirectJSONEncodable: Encodable {
    /// The compact JSON object, members in the order of the coding keys, nil optionals left out.
    var jsonBytes: [UInt8] { get }
}

extension Pass1Response: DirectJSONEncodable {
    package var jsonBytes: [UInt8] {
        var w = JSONObjectWriter()
        w.member("y", y)
        w.member("message", message)
        w.member("version", version)
        w.member("pass", pass)
        w.member("pass1Id", pass1Id)
        return w.finish()
    }
}

extension Pass2Response: DirectJSONEncodable {
    package var jsonBytes: [UInt8] {
        var w = JSONObjectWriter()
        w.member("version", version)
        w.member("pass", pass)
        w.member("authOTT", authOTT)
        w.member("OTP", OTP)
        return w.finish()
    }
}

extension RPAAuthenticateResponse: DirectJSONEncodable {
    package var jsonBytes: [UInt8] {
        var w = JSONObjectWriter()
        w.member("someUserData", someUserData)
        w.member("expireTime", expireTime)
        w.member("ttlSeconds", ttlSeconds)
        w.member("nowTime", nowTime)
        w.member("verdictSignature", verdictSignature)
        w.member("attemptsLeft", attemptsLeft)
        w.member("attemptsLeftSignature", attemptsLeftSignature)
        w.member("offlineLoginsRecorded", offlineLoginsRecorded)
        w.member("offlineLoginsSignature", offlineLoginsSignature)
        return w.finish()
    }
}
