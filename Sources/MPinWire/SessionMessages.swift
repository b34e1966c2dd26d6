// Wire messages of the session endpoints the SDK reads for service and session details
// (PROTOCOL.md §5.5): the MFA platform serves them; a Milagro RPS does not.

/// `GET {url}/service` 200 response: what a service URL offers. Only `"type": "online"`
/// services can be used by this SDK.
public struct ServiceDetailsResponse: Codable, Sendable, Equatable {
    public var type: String
    public var name: String
    public var url: String
    public var rps_prefix: String
    public var logo_url: String

    public init(type: String = "online", name: String, url: String, rpsPrefix: String, logoURL: String) {
        self.type = type; self.name = name; self.url = url; rps_prefix = rpsPrefix; logo_url = logoURL
    }
}

/// `POST {codeStatusURL}`: the SDK reports what it does with an access code: `"wid"` asks
/// for the session's details, `"user"` says which identity is about to authenticate.
public struct CodeStatusRequest: Codable, Sendable, Equatable {
    public var status: String
    public var wid: String
    public var userId: String?

    /// The request for a session's details.
    public static func sessionDetails(accessCode: String) -> CodeStatusRequest {
        CodeStatusRequest(status: "wid", wid: accessCode, userId: nil)
    }

    /// The notice that `userId` is about to authenticate for the session.
    public static func userChosen(accessCode: String, userId: String) -> CodeStatusRequest {
        CodeStatusRequest(status: "user", wid: accessCode, userId: userId)
    }

    public init(status: String, wid: String, userId: String?) {
        self.status = status; self.wid = wid; self.userId = userId
    }
}

/// `POST {codeStatusURL}` answer to `"status": "wid"`, in the SDK's spelling.
public struct SessionDetailsResponse: Codable, Sendable, Equatable {
    public var prerollId: String
    public var appName: String
    public var appLogoURL: String

    public init(prerollId: String, appName: String, appLogoURL: String) {
        self.prerollId = prerollId; self.appName = appName; self.appLogoURL = appLogoURL
    }
}

/// The final step's answer on the MFA platform: an authorization code for the session's
/// relying party (FinishAuthenticationMFA).
public struct AuthorizationCodeResponse: Codable, Sendable, Equatable {
    public var code: String
    public init(code: String) { self.code = code }
}
