// Wire messages of the RPS (docs/PROTOCOL.md §3–§6), with the original field names and JSON types.

/// `GET /{p}/clientSettings` (§3.1). Relative URLs start with `/` and are resolved by the
/// client against its backend URL.
package struct ClientSettings: Codable, Sendable, Equatable {
    package var requestOTP: Bool
    package var mpinAuthServerURL: String
    package var timePermitsURL: String
    package var useWebSocket: Bool
    package var useNFC: Bool?
    package var setDeviceName: Bool
    package var seedValue: String
    package var accessNumberDigits: Int
    package var accessNumberURL: String?
    package var setupDoneURL: String
    package var timePermitsStorageURL: String
    package var authenticateURL: String
    package var certivoxURL: String
    package var accessNumberUseCheckSum: Bool?
    package var registerURL: String
    package var appID: String
    package var cSum: Int
    package var signatureURL: String
    package var getAccessNumberURL: String?
    package var mobileAuthenticateURL: String
    /// Not emitted by the original RPS; the SDK defaults it to true.
    package var usePermits: Bool?
    /// The MFA platform's session-status endpoint (§5.5); absent on a Milagro RPS.
    package var codeStatusURL: String?
    /// mpin-server's verdict-signing public key (hex, 65-byte G1 point; §4.5.1), which a host
    /// pins at registration; absent on a Milagro RPS, which cannot sign its verdicts.
    package var verdictKey: String?

    package init(requestOTP: Bool, mpinAuthServerURL: String, timePermitsURL: String, useWebSocket: Bool,
                useNFC: Bool?, setDeviceName: Bool, seedValue: String, accessNumberDigits: Int,
                accessNumberURL: String?, setupDoneURL: String, timePermitsStorageURL: String,
                authenticateURL: String, certivoxURL: String, accessNumberUseCheckSum: Bool?,
                registerURL: String, appID: String, cSum: Int, signatureURL: String,
                getAccessNumberURL: String?, mobileAuthenticateURL: String, usePermits: Bool? = nil,
                codeStatusURL: String? = nil, verdictKey: String? = nil) {
        self.requestOTP = requestOTP; self.mpinAuthServerURL = mpinAuthServerURL
        self.timePermitsURL = timePermitsURL; self.useWebSocket = useWebSocket; self.useNFC = useNFC
        self.setDeviceName = setDeviceName; self.seedValue = seedValue
        self.accessNumberDigits = accessNumberDigits; self.accessNumberURL = accessNumberURL
        self.setupDoneURL = setupDoneURL; self.timePermitsStorageURL = timePermitsStorageURL
        self.authenticateURL = authenticateURL; self.certivoxURL = certivoxURL
        self.accessNumberUseCheckSum = accessNumberUseCheckSum; self.registerURL = registerURL
        self.appID = appID; self.cSum = cSum; self.signatureURL = signatureURL
        self.getAccessNumberURL = getAccessNumberURL; self.mobileAuthenticateURL = mobileAuthenticateURL
        self.usePermits = usePermits; self.codeStatusURL = codeStatusURL; self.verdictKey = verdictKey
    }
}

/// `PUT /{p}/user[/{mpinIdHex}]` request (§3.3).
package struct RegisterRequest: Codable, Sendable, Equatable {
    package var userId: String
    /// Always 1 from the SDK; goes into the mpinId.
    package var mobile: Int?
    package var deviceName: String?
    package var userData: String?
    /// One-time activation code (ignored by the original RPS; mpin-server checks it).
    package var activateCode: String?
    /// Only when restarting a registration, with the `/{mpinIdHex}` suffix.
    package var regOTT: String?
    /// MFA flavour (docs/MFA.md §8): the access code of the session the registration belongs to.
    package var wid: String?
    /// MFA flavour (docs/MFA.md §8): a registration code issued to another device of the user,
    /// which makes the registration active without identity verification.
    package var regCode: String?
    /// mpin-server: `"host"` for a registration that logs in to its host only (`mpinctl
    /// register`, pam_mpin's self-enrolment): the server writes it into the mpinId, and a proof
    /// made with such a token then approves no access number or web login (`MPinIdentity.hostScope`).
    package var scope: String?
    /// mpin-server: the mpinId (hex) of the user's earlier identity this registration replaces
    /// (a forgotten PIN, a blocked identity). Heeded only with a registration code that is
    /// right for the same user: the server then deletes that identity, so the old token stops
    /// working for good.
    package var replaces: String?

    package init(userId: String, mobile: Int? = 1, deviceName: String? = nil, userData: String? = nil,
                activateCode: String? = nil, regOTT: String? = nil, wid: String? = nil, regCode: String? = nil,
                scope: String? = nil, replaces: String? = nil) {
        self.userId = userId; self.mobile = mobile; self.deviceName = deviceName
        self.userData = userData; self.activateCode = activateCode; self.regOTT = regOTT
        self.wid = wid; self.regCode = regCode; self.scope = scope; self.replaces = replaces
    }
}

/// `PUT /{p}/user` 200 response. `expireTime`/`nowTime` use `WireTime.pythonISO`.
package struct RegisterResponse: Codable, Sendable, Equatable {
    package var mpinId: String
    package var regOTT: String
    package var expireTime: String
    package var nowTime: String
    package var active: Bool

    package init(mpinId: String, regOTT: String, expireTime: String, nowTime: String, active: Bool) {
        self.mpinId = mpinId; self.regOTT = regOTT; self.expireTime = expireTime
        self.nowTime = nowTime; self.active = active
    }
}

/// `POST /user/{mpinIdHex}` (RPA → RPS activation, §3.4).
package struct ActivateRequest: Codable, Sendable, Equatable {
    package var activateKey: String
    package init(activateKey: String) { self.activateKey = activateKey }
}

/// `GET /{p}/signature/{mpinIdHex}?regOTT=` 200 response (§3.5). `params` is a form-encoded
/// query string to append verbatim to `{certivoxURL}clientSecret?`.
package struct SignatureResponse: Codable, Sendable, Equatable {
    package var clientSecretShare: String
    package var params: String
    package init(clientSecretShare: String, params: String) {
        self.clientSecretShare = clientSecretShare; self.params = params
    }
}

/// D-TA `GET clientSecret?…` 200 response (§3.6, Appendix A).
package struct ClientSecretResponse: Codable, Sendable, Equatable {
    package var clientSecret: String
    package var message: String
    package var version: String?
    package init(clientSecret: String, message: String = "OK", version: String? = nil) {
        self.clientSecret = clientSecret; self.message = message; self.version = version
    }
}

/// D-TA `GET serverSecret?…` 200 response (Appendix A).
package struct ServerSecretResponse: Codable, Sendable, Equatable {
    package var serverSecret: String
    package var startTime: String
    package var message: String
    package init(serverSecret: String, startTime: String, message: String = "OK") {
        self.serverSecret = serverSecret; self.startTime = startTime; self.message = message
    }
}

/// `GET /{p}/timePermit/{mpinIdHex}` 200 response (§4.1). `date` is an integer day number.
package struct TimePermitResponse: Codable, Sendable, Equatable {
    package var date: Int
    package var signature: String
    package var storageId: String
    package var message: String
    package var timePermit: String
    package var version: String

    package init(date: Int, signature: String, storageId: String, message: String = "M-Pin Time Permit Generated",
                timePermit: String, version: String = "0.3") {
        self.date = date; self.signature = signature; self.storageId = storageId
        self.message = message; self.timePermit = timePermit; self.version = version
    }
}

/// D-TA `GET timePermit?…` 200 response (§4.2).
package struct DTATimePermitResponse: Codable, Sendable, Equatable {
    package var timePermit: String
    package var message: String
    package var version: String?
    package init(timePermit: String, message: String = "OK", version: String? = nil) {
        self.timePermit = timePermit; self.message = message; self.version = version
    }
}

/// `POST {mpinAuthServerURL}/pass1` request (§4.3).
package struct Pass1Request: Codable, Sendable, Equatable {
    package var pass: Int?
    package var mpin_id: String
    package var UT: String
    package var U: String
    package init(mpinId: String, ut: String, u: String) { pass = 1; mpin_id = mpinId; UT = ut; U = u }
}

/// `pass1` 200 response.
package struct Pass1Response: Codable, Sendable, Equatable {
    package var y: String
    package var message: String
    package var version: String
    package var pass: Int
    /// Which pending pass 1 this is (hex; mpin-server only): echoed in pass 2, it lets several
    /// logins of one identity run at once (§4.3). The original SDK ignores it.
    package var pass1Id: String?
    package init(y: String, pass1Id: String? = nil) { self.y = y; message = "OK"; version = "0.3"; pass = 1; self.pass1Id = pass1Id }
}

/// `POST {mpinAuthServerURL}/pass2` request (§4.4). `OTP` is a JSON boolean from the SDK; a
/// number (0/1) is also accepted, as the original server does `int(OTP) == 1`.
package struct Pass2Request: Codable, Sendable, Equatable {
    package var pass: Int?
    package var OTP: Bool
    /// The access number, or the string "0" when there is none.
    package var WID: String
    package var V: String
    package var mpin_id: String
    /// The `pass1Id` of the pass-1 answer, echoed (absent from the original SDK's requests).
    package var pass1Id: String?
    /// A fresh 32-byte nonce (hex) from a client that wants this login's verdict signed
    /// (§4.5.1): the server binds it to the pass-2 result (inside the authOTT it returns), so the
    /// signature answers this proof and no other. Absent from the original SDK's requests.
    package var verdictNonce: String?

    package init(mpinId: String, v: String, wid: String = "0", otp: Bool = false, pass1Id: String? = nil,
                verdictNonce: String? = nil) {
        pass = 2; OTP = otp; WID = wid; V = v; mpin_id = mpinId; self.pass1Id = pass1Id; self.verdictNonce = verdictNonce
    }

    enum CodingKeys: String, CodingKey { case pass, OTP, WID, V, mpin_id, pass1Id, verdictNonce }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pass = try c.decodeIfPresent(Int.self, forKey: .pass)
        if let b = try? c.decode(Bool.self, forKey: .OTP) {
            OTP = b
        } else if let i = try? c.decode(Int.self, forKey: .OTP) {
            OTP = i == 1
        } else if c.contains(.OTP) {
            throw DecodingError.typeMismatch(Bool.self, .init(codingPath: [CodingKeys.OTP],
                                                              debugDescription: "OTP must be a boolean"))
        } else {
            OTP = false
        }
        WID = try c.decode(String.self, forKey: .WID)
        V = try c.decode(String.self, forKey: .V)
        mpin_id = try c.decode(String.self, forKey: .mpin_id)
        pass1Id = try c.decodeIfPresent(String.self, forKey: .pass1Id)
        verdictNonce = try c.decodeIfPresent(String.self, forKey: .verdictNonce)
    }
}

/// `pass2` 200 response: always 200, the verdict comes at the authenticate step.
package struct Pass2Response: Codable, Sendable, Equatable {
    package var version: String
    package var pass: Int
    package var authOTT: String
    /// Six digits, only when the request asked for an OTP.
    package var OTP: String?
    package init(authOTT: String, otp: String? = nil) { version = "0.3"; pass = 2; self.authOTT = authOTT; OTP = otp }
}

/// The pass-2 response object as the client forwards it to the final step (§4.5).
package struct MPinResponse: Codable, Sendable, Equatable {
    package var authOTT: String?
    package var version: String?
    package var pass: Int?
    package var OTP: String?
    package init(authOTT: String?, version: String? = nil, pass: Int? = nil, otp: String? = nil) {
        self.authOTT = authOTT; self.version = version; self.pass = pass; OTP = otp
    }
    package init(_ pass2: Pass2Response) {
        self.init(authOTT: pass2.authOTT, version: pass2.version, pass: pass2.pass, otp: pass2.OTP)
    }
}

/// Body of `POST {authenticateURL}` (RPA) and `POST {mobileAuthenticateURL}` (RPS): the
/// pass-2 answer wrapped as `mpinResponse`. Generic over that answer because the two sides
/// hold it differently: the server reads it as an `MPinResponse` (`AuthenticateRequest`),
/// while the client forwards the authentication server's object untouched (§4.5), whatever
/// fields that server added.
package struct AuthenticateEnvelope<Response: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    package var mpinResponse: Response
    /// A host's offline logins since the user's last online login (§4.5.2), bound to this
    /// login's verdict nonce; mpin-server records them when the login succeeds.
    package var offlineLogins: OfflineLoginReport?
    package init(mpinResponse: Response, offlineLogins: OfflineLoginReport? = nil) {
        self.mpinResponse = mpinResponse; self.offlineLogins = offlineLogins
    }

    enum CodingKeys: String, CodingKey { case mpinResponse, offlineLogins }

    /// A report that does not decode is read as none: it never changes the login's answer.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mpinResponse = try c.decode(Response.self, forKey: .mpinResponse)
        offlineLogins = try? c.decodeIfPresent(OfflineLoginReport.self, forKey: .offlineLogins)
    }
}

/// The final step's body as the server reads it.
package typealias AuthenticateRequest = AuthenticateEnvelope<MPinResponse>

/// Logout data handed to a mobile client after an access-number login (§5.6).
package struct LogoutData: Codable, Sendable, Equatable {
    package var userId: String
    package var sessionToken: String
    package init(userId: String, sessionToken: String) { self.userId = userId; self.sessionToken = sessionToken }
}

/// `POST /{p}/authenticate` 200 response (§5.4).
package struct MobileAuthenticateResponse: Codable, Sendable, Equatable {
    package var logoutData: LogoutData
    package var logoutURL: String
    package init(logoutData: LogoutData, logoutURL: String) { self.logoutData = logoutData; self.logoutURL = logoutURL }
}

/// RPA → RPS private `POST /authenticate` request (§4.5).
package struct TokenAuthenticateRequest: Codable, Sendable, Equatable {
    package var authOTT: String
    package var logoutData: LogoutData?
    package var logoutURL: String?
    /// The requester's webOTT of the access number the authOTT approved (device mode, §4.5.1):
    /// proves the requester and carries the nonce its verdict is signed over.
    package var webOTT: String?
    /// The requester's host key (hex, PROTOCOL.md §5.8): with the webOTT of an approved number,
    /// the answer certifies it.
    package var hostKey: String?
    package init(authOTT: String, logoutData: LogoutData? = nil, logoutURL: String? = nil, webOTT: String? = nil,
                hostKey: String? = nil) {
        self.authOTT = authOTT; self.logoutData = logoutData; self.logoutURL = logoutURL; self.webOTT = webOTT
        self.hostKey = hostKey
    }
}

/// RPS private `POST /authenticate` response; the HTTP status equals `status`.
package struct TokenAuthenticateResponse: Codable, Sendable, Equatable {
    package var userId: String
    package var mpinId: String
    package var status: Int
    package var message: String
    package var OTP: String?
    /// The server's signature of the verdict (§4.5.1), when the request carried a nonce.
    package var verdictSignature: String?
    /// The server's certificate of the requester's host key (§5.8), on an approved device login
    /// whose requester sent one.
    package var hostCertificate: String?
    /// On a wrong PIN (401): the wrong PINs the identity may still take, and its signature
    /// (Verdict.attemptsLeftContext), when the request carried a nonce.
    package var attemptsLeft: Int?
    package var attemptsLeftSignature: String?
    package init(userId: String, mpinId: String, status: Int, message: String, otp: String? = nil,
                verdictSignature: String? = nil, hostCertificate: String? = nil, attempts: SignedCount? = nil) {
        self.userId = userId; self.mpinId = mpinId; self.status = status; self.message = message; OTP = otp
        self.verdictSignature = verdictSignature; self.hostCertificate = hostCertificate
        attemptsLeft = attempts?.count; attemptsLeftSignature = attempts?.signature
    }
}

/// Demo-RPA `POST {authenticateURL}` response body.
/// A wrong PIN's count of attempts left and the server's signature of it (Verdict.attemptsLeftContext).
package struct SignedCount: Sendable, Equatable {
    package var count: Int
    package var signature: String
    package init(count: Int, signature: String) { self.count = count; self.signature = signature }
}

package struct RPAAuthenticateResponse: Codable, Sendable, Equatable {
    package var someUserData: String
    /// The OTP's lifetime (ms since the epoch) when the authentication issued one (§6), so
    /// the client can fill its OTP object.
    package var expireTime: Int64?
    package var ttlSeconds: Int?
    package var nowTime: Int64?
    /// The server's signature of the verdict (§4.5.1), when the request carried a nonce; sent
    /// with the blocked answer (410) too, so that a host deletes a token only on the word of
    /// the server it pinned.
    package var verdictSignature: String?
    /// On a wrong PIN (401): as TokenAuthenticateResponse's.
    package var attemptsLeft: Int?
    package var attemptsLeftSignature: String?
    /// On a success whose request carried an offline-login report the server kept (§4.5.2):
    /// how many of its logins were new to it, and the signature of that count over the login's
    /// nonce. Absent when the report was refused.
    package var offlineLoginsRecorded: Int?
    package var offlineLoginsSignature: String?
    package init(someUserData: String, otpTiming: OTPTiming? = nil, verdictSignature: String? = nil,
                attempts: SignedCount? = nil, offlineLogins: SignedCount? = nil) {
        attemptsLeft = attempts?.count; attemptsLeftSignature = attempts?.signature
        offlineLoginsRecorded = offlineLogins?.count; offlineLoginsSignature = offlineLogins?.signature
        self.someUserData = someUserData
        expireTime = otpTiming?.expireTime
        ttlSeconds = otpTiming?.ttlSeconds
        nowTime = otpTiming?.nowTime
        self.verdictSignature = verdictSignature
    }
}

/// OTP lifetime returned by an RPA that validates OTPs (§6), times in milliseconds.
package struct OTPTiming: Codable, Sendable, Equatable {
    package var expireTime: Int64
    package var ttlSeconds: Int
    package var nowTime: Int64
    package init(expireTime: Int64, ttlSeconds: Int, nowTime: Int64) {
        self.expireTime = expireTime; self.ttlSeconds = ttlSeconds; self.nowTime = nowTime
    }
}

/// `POST /{p}/getAccessNumber` 200 response (§5.1). The access number is a JSON string.
package struct AccessNumberResponse: Codable, Sendable, Equatable {
    package var localTimeStart: Int64
    package var ttlSeconds: Int
    package var localTimeEnd: Int64
    package var webOTT: String
    package var accessNumber: String
    package init(localTimeStart: Int64, ttlSeconds: Int, localTimeEnd: Int64, webOTT: String, accessNumber: String) {
        self.localTimeStart = localTimeStart; self.ttlSeconds = ttlSeconds; self.localTimeEnd = localTimeEnd
        self.webOTT = webOTT; self.accessNumber = accessNumber
    }
}

/// Browser polling `POST /{p}/accessnumber` request (§5.3, recorded variant).
package struct AccessNumberPollRequest: Codable, Sendable, Equatable {
    package var webOTT: String
    package init(webOTT: String) { self.webOTT = webOTT }
}

/// Browser polling 200 response, once the mobile authentication succeeded.
package struct AccessNumberPollResponse: Codable, Sendable, Equatable {
    package var authOTT: String
    package init(authOTT: String) { self.authOTT = authOTT }
}

/// `GET /status` and the generic RPS message body `{"version":"0.3","message":…}`.
package struct StatusResponse: Codable, Sendable, Equatable {
    package var version: String
    package var message: String
    package init(version: String = "0.3", message: String) { self.version = version; self.message = message }
}

/// Error body: `{"message": …}` plus the RPS `version` where the original sends one.
package struct ErrorResponse: Codable, Sendable, Equatable {
    package var version: String?
    package var message: String
    /// mpin-server: the signature of a "blocked" verdict (410) whose login bound a nonce (§4.5.1).
    package var verdictSignature: String?
    package init(message: String, version: String? = nil, verdictSignature: String? = nil) {
        self.message = message; self.version = version; self.verdictSignature = verdictSignature
    }
}
