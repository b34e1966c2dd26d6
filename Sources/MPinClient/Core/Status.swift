/// The result of a client-core call: a code from the Milagro SDK Core's list and a message a
/// person can act on. Messages never contain a PIN, token, OTT or secret share.
public struct MPinStatus: Sendable, Equatable, CustomStringConvertible {
    /// The SDK Core status codes (the Milagro SDK API reference; docs/PROTOCOL.md §7), plus
    /// `untrustedDomainError`.
    public enum Code: String, Sendable, CaseIterable {
        case ok = "OK"
        case pinInputCanceled = "PIN_INPUT_CANCELED"
        case cryptoError = "CRYPTO_ERROR"
        case storageError = "STORAGE_ERROR"
        case networkError = "NETWORK_ERROR"
        case responseParseError = "RESPONSE_PARSE_ERROR"
        case flowError = "FLOW_ERROR"
        case identityNotAuthorized = "IDENTITY_NOT_AUTHORIZED"
        case identityNotVerified = "IDENTITY_NOT_VERIFIED"
        case requestExpired = "REQUEST_EXPIRED"
        case revoked = "REVOKED"
        case incorrectPIN = "INCORRECT_PIN"
        case incorrectAccessNumber = "INCORRECT_ACCESS_NUMBER"
        case httpServerError = "HTTP_SERVER_ERROR"
        case httpRequestError = "HTTP_REQUEST_ERROR"
        case badUserAgent = "BAD_USER_AGENT"
        case clientSecretExpired = "CLIENT_SECRET_EXPIRED"
        case untrustedDomainError = "UNTRUSTED_DOMAIN_ERROR"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message.isEmpty ? code.defaultMessage : message
    }

    public static let ok = MPinStatus(.ok)
    public var isOK: Bool { code == .ok }
    public var description: String { "\(code.rawValue): \(message)" }
}

extension MPinStatus.Code {
    var defaultMessage: String {
        switch self {
        case .ok: "success"
        case .pinInputCanceled: "no PIN was entered"
        case .cryptoError: "a cryptographic value was invalid"
        case .storageError: "the local store could not be read or written"
        case .networkError: "the server could not be reached"
        case .responseParseError: "the server's response could not be understood"
        case .flowError: "this call is not allowed in the current state"
        case .identityNotAuthorized: "the identity is not authorised"
        case .identityNotVerified: "the identity has not been verified yet"
        case .requestExpired: "the request expired"
        case .revoked: "the identity has been revoked"
        case .incorrectPIN: "wrong PIN"
        case .incorrectAccessNumber: "wrong access number"
        case .httpServerError: "the server failed"
        case .httpRequestError: "the server refused the request"
        case .badUserAgent: "the server refused this client"
        case .clientSecretExpired: "the client secret expired; register again"
        case .untrustedDomainError: "the URL is not in a trusted domain"
        }
    }
}

/// The user states of the SDK (docs/PROTOCOL.md §7.4).
public enum MPinUserState: String, Sendable, CaseIterable {
    case invalid = "INVALID"
    case startedRegistration = "STARTED_REGISTRATION"
    case activated = "ACTIVATED"
    case registered = "REGISTERED"
    case blocked = "BLOCKED"
}

/// A one-time password issued with an authentication (FinishAuthenticationOTP).
public struct MPinOTP: Sendable, Equatable {
    public var otp = ""
    /// Seconds since the epoch.
    public var expireTime: Int64 = 0
    public var ttlSeconds: Int = 0
    public var nowTime: Int64 = 0
    public var status = MPinStatus(.flowError, "no OTP was requested")
}

/// Details of a service, from GetServiceDetails (`{url}/service`).
public struct MPinServiceDetails: Sendable, Equatable {
    public var name = "", backendURL = "", rpsPrefix = "", logoURL = ""
}

/// Details of a browser session, from GetSessionDetails (codeStatus). The customer members
/// are the MFA platform's (empty from a server that does not send them).
public struct MPinSessionDetails: Sendable, Equatable {
    public var prerollId = "", appName = "", appIconURL = ""
    public var customerId = "", customerName = "", customerIconURL = ""
    /// What asks (a web login's application and browser address), sanitized; may be empty.
    public var loginDescription = ""
}

/// A registration code issued with an authentication (MPinMFA's FinishAuthenticationRegCode,
/// docs/MFA.md §8), with the fields of `MPinOTP`: `otp` is the code, times in seconds.
public struct MPinRegCode: Sendable, Equatable {
    public var otp = ""
    /// Seconds since the epoch.
    public var expireTime: Int64 = 0
    public var ttlSeconds: Int = 0
    public var nowTime: Int64 = 0
    public var status = MPinStatus(.flowError, "no registration code was requested")
}
