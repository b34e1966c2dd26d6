// Wire messages of the session endpoints the SDK reads for service and session details
// (docs/PROTOCOL.md §5.5): the MFA platform serves them; a Milagro RPS does not.

/// `GET {url}/service` 200 response: what a service URL offers. Only `"type": "online"`
/// services can be used by this SDK.
package struct ServiceDetailsResponse: Codable, Sendable, Equatable {
    package var type: String
    package var name: String
    package var url: String
    package var rps_prefix: String
    package var logo_url: String

    package init(type: String = "online", name: String, url: String, rpsPrefix: String, logoURL: String) {
        self.type = type; self.name = name; self.url = url; rps_prefix = rpsPrefix; logo_url = logoURL
    }
}

/// `POST {codeStatusURL}`: the SDK reports what it does with an access code: `"wid"` asks
/// for the session's details, `"user"` says which identity is about to authenticate.
package struct CodeStatusRequest: Codable, Sendable, Equatable {
    package var status: String
    package var wid: String
    package var userId: String?

    /// The request for a session's details.
    package static func sessionDetails(accessCode: String) -> CodeStatusRequest {
        CodeStatusRequest(status: "wid", wid: accessCode, userId: nil)
    }

    /// The notice that `userId` is about to authenticate for the session.
    package static func userChosen(accessCode: String, userId: String) -> CodeStatusRequest {
        CodeStatusRequest(status: "user", wid: accessCode, userId: userId)
    }

    package init(status: String, wid: String, userId: String?) {
        self.status = status; self.wid = wid; self.userId = userId
    }
}

/// `POST {codeStatusURL}` answer to `"status": "wid"`, in the SDK's spelling. The customer
/// members are the MFA platform's (docs/MFA.md §4); a Milagro-era server leaves them out.
package struct SessionDetailsResponse: Codable, Sendable, Equatable {
    package var prerollId: String
    package var appName: String
    package var appLogoURL: String
    package var customerId: String?
    package var customerName: String?
    package var customerLogoURL: String?
    /// **[here]** What asks, for a web login with a page (docs/MFA.md §5.4): the application
    /// and the browser's address, as the short code's access-number description says it.
    package var loginDescription: String?

    package init(prerollId: String, appName: String, appLogoURL: String, customerId: String? = nil,
                customerName: String? = nil, customerLogoURL: String? = nil, loginDescription: String? = nil) {
        self.prerollId = prerollId; self.appName = appName; self.appLogoURL = appLogoURL
        self.customerId = customerId; self.customerName = customerName; self.customerLogoURL = customerLogoURL
        self.loginDescription = loginDescription
    }
}

/// `POST {codeStatusURL}` with `"status": "abort"`: the session of the access code ends
/// (AbortSession, docs/MFA.md §4).
extension CodeStatusRequest {
    package static func abort(accessCode: String) -> CodeStatusRequest {
        CodeStatusRequest(status: "abort", wid: accessCode, userId: nil)
    }
}

/// `POST /authorize` answer to an app (docs/MFA.md §5.2): the QR-friendly URL ends with
/// `#<access code>` (GetAccessCode cuts the code after the last `#`).
package struct AuthorizeResponse: Codable, Sendable, Equatable {
    package var qrURL: String
    package var accessCode: String?
    package var webOTT: String?
    package var ttlSeconds: Int?
    package var expireTime: Int64?

    package init(qrURL: String, accessCode: String? = nil, webOTT: String? = nil, ttlSeconds: Int? = nil,
                expireTime: Int64? = nil) {
        self.qrURL = qrURL; self.accessCode = accessCode; self.webOTT = webOTT
        self.ttlSeconds = ttlSeconds; self.expireTime = expireTime
    }
}

/// `POST /{p}/regCode` 200 answer (docs/MFA.md §8): a registration code for another device of
/// the authenticated user, its times in milliseconds since the epoch.
package struct RegCodeResponse: Codable, Sendable, Equatable {
    package var regCode: String
    package var expireTime: Int64
    package var ttlSeconds: Int
    package var nowTime: Int64

    package init(regCode: String, expireTime: Int64, ttlSeconds: Int, nowTime: Int64) {
        self.regCode = regCode; self.expireTime = expireTime; self.ttlSeconds = ttlSeconds; self.nowTime = nowTime
    }
}

/// The final step's answer on the MFA platform: an authorization code for the session's
/// relying party (FinishAuthenticationMFA).
package struct AuthorizationCodeResponse: Codable, Sendable, Equatable {
    package var code: String
    /// mpin-server adds where a browser would be sent (docs/MFA.md §6); an app ignores it.
    package var redirectURL: String?
    package init(code: String, redirectURL: String? = nil) { self.code = code; self.redirectURL = redirectURL }
}
