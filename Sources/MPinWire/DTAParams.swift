/// Query parameters of a D-TA `clientSecret` request (§3.5–§3.6): signed by the RPS, carried
/// by the client to the second D-TA verbatim.
package struct ClientSecretParams: Sendable, Equatable {
    package var mobile: Int
    package var expires: String
    package var appID: String
    package var hashMpinID: String
    package var signature: String
    package var hashUserID: String

    package init(mobile: Int, expires: String, appID: String, hashMpinID: String, signature: String,
                hashUserID: String = "") {
        self.mobile = mobile; self.expires = expires; self.appID = appID
        self.hashMpinID = hashMpinID; self.signature = signature; self.hashUserID = hashUserID
    }

    /// The form-encoded query string, in the recorded key order.
    package var query: String {
        FormEncoding.encode([("mobile", String(mobile)), ("expires", expires), ("app_id", appID),
                             ("hash_mpin_id", hashMpinID), ("signature", signature),
                             ("hash_user_id", hashUserID)])
    }

    /// Reads the parameters from decoded query pairs. Errors name the offending field only.
    package init(pairs: [(String, String)]) throws(WireError) {
        func field(_ name: String) throws(WireError) -> String {
            guard let v = pairs.last(where: { $0.0 == name })?.1 else { throw .missingField(name) }
            return v
        }
        let mobileText = pairs.last(where: { $0.0 == "mobile" })?.1 ?? "0"
        guard let m = Int(mobileText) else { throw .invalidField("mobile") }
        self.init(mobile: m, expires: try field("expires"), appID: try field("app_id"),
                  hashMpinID: try field("hash_mpin_id"), signature: try field("signature"),
                  hashUserID: try field("hash_user_id"))
    }
}

/// What is wrong with a wire value. Carries field names, never values (they may be secret).
package enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingField(String)
    case invalidField(String)

    package var description: String {
        switch self {
        case .missingField(let f): return "\(f) argument missing"
        case .invalidField(let f): return "invalid \(f)"
        }
    }
}
