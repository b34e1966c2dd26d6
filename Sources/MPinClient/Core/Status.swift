/// The result of a client-core call: a code from the Milagro SDK Core's list and a message a
/// person can act on. Messages never contain a PIN, token, OTT or secret share.
public struct MPinStatus: Sendable, Equatable, CustomStringConvertible {
    /// The SDK Core status codes (the Milagro SDK API reference; docs/PROTOCOL.md §7), plus
    /// `untrustedDomainError`.
    public enum Code: String, Sendable, CaseIterable {
        /// Success.
        case ok = "OK"
        /// No PIN was entered.
        case pinInputCanceled = "PIN_INPUT_CANCELED"
        /// A cryptographic value was invalid.
        case cryptoError = "CRYPTO_ERROR"
        /// The local store could not be read or written.
        case storageError = "STORAGE_ERROR"
        /// The server could not be reached.
        case networkError = "NETWORK_ERROR"
        /// The server's response could not be understood.
        case responseParseError = "RESPONSE_PARSE_ERROR"
        /// This call is not allowed in the current state.
        case flowError = "FLOW_ERROR"
        /// The identity is not authorised.
        case identityNotAuthorized = "IDENTITY_NOT_AUTHORIZED"
        /// The identity has not been verified yet.
        case identityNotVerified = "IDENTITY_NOT_VERIFIED"
        /// The request expired.
        case requestExpired = "REQUEST_EXPIRED"
        /// The identity has been revoked.
        case revoked = "REVOKED"
        /// Wrong PIN.
        case incorrectPIN = "INCORRECT_PIN"
        /// Wrong access number.
        case incorrectAccessNumber = "INCORRECT_ACCESS_NUMBER"
        /// The server failed.
        case httpServerError = "HTTP_SERVER_ERROR"
        /// The server refused the request.
        case httpRequestError = "HTTP_REQUEST_ERROR"
        /// The server refused this client.
        case badUserAgent = "BAD_USER_AGENT"
        /// The client secret expired; register again.
        case clientSecretExpired = "CLIENT_SECRET_EXPIRED"
        /// The URL is not in a trusted domain.
        case untrustedDomainError = "UNTRUSTED_DOMAIN_ERROR"
    }

    /// What happened.
    public var code: Code
    /// Why, for a person; the code's default message when the call had nothing more to say.
    public var message: String

    /// A status with `code` and `message` (or the code's default message).
    public init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message.isEmpty ? code.defaultMessage : message
    }

    /// Success.
    public static let ok = MPinStatus(.ok)
    /// Whether the code is OK.
    public var isOK: Bool { code == .ok }
    /// `CODE: message`, as the programs print a failure.
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
    /// Made (`makeNewUser`), no registration started, or deleted.
    case invalid = "INVALID"
    /// Registration started; waiting for the identity to be confirmed.
    case startedRegistration = "STARTED_REGISTRATION"
    /// Confirmed; `finishRegistration` may set the PIN.
    case activated = "ACTIVATED"
    /// Holds a token; may authenticate.
    case registered = "REGISTERED"
    /// Too many wrong PINs, or revoked: registration must start again.
    case blocked = "BLOCKED"
}

/// A one-time password issued with an authentication (FinishAuthenticationOTP).
public struct MPinOTP: Sendable, Equatable {
    /// The password.
    public var otp = ""
    /// Seconds since the epoch.
    public var expireTime: Int64 = 0
    /// How long it is valid, in seconds.
    public var ttlSeconds: Int = 0
    /// The server's time when it was issued, seconds since the epoch.
    public var nowTime: Int64 = 0
    /// Whether one was issued.
    public var status = MPinStatus(.flowError, "no OTP was requested")
}

/// Details of a service, from GetServiceDetails (`{url}/service`).
public struct MPinServiceDetails: Sendable, Equatable {
    /// The service's name, its backend's URL and RPS prefix (for `setBackend`) and its logo's URL.
    public var name = "", backendURL = "", rpsPrefix = "", logoURL = ""
}

/// Details of a browser session, from GetSessionDetails (codeStatus). The customer members
/// are the MFA platform's (empty from a server that does not send them).
public struct MPinSessionDetails: Sendable, Equatable {
    /// The user id the session suggests, and the application asking, with its icon.
    public var prerollId = "", appName = "", appIconURL = ""
    /// The customer the application belongs to, with its name and icon.
    public var customerId = "", customerName = "", customerIconURL = ""
    /// What asks (a web login's application and browser address), sanitized; may be empty.
    public var loginDescription = ""
}

/// A registration code issued with an authentication (MPinMFA's FinishAuthenticationRegCode,
/// docs/MFA.md §8), with the fields of `MPinOTP`: `otp` is the code, times in seconds.
public struct MPinRegCode: Sendable, Equatable {
    /// The registration code.
    public var otp = ""
    /// Seconds since the epoch.
    public var expireTime: Int64 = 0
    /// How long it is valid, in seconds.
    public var ttlSeconds: Int = 0
    /// The server's time when it was issued, seconds since the epoch.
    public var nowTime: Int64 = 0
    /// Whether one was issued.
    public var status = MPinStatus(.flowError, "no registration code was requested")
}
