public import MPinCrypto
internal import MPinJSON
internal import MPinWire

/// The MIRACL MFA flavour of the client core (the SDK API reference's `MPinMFA`, MIRACL's `MfaSDK`),
/// against the platform side of mpin-server (docs/MFA.md).
///
/// It is a second facade over the same core as `MPinSDK`: it owns an `MPinSDK` and drives
/// its registration, authentication, request and storage code, adding what the platform
/// has on top (customers, access codes, authorization and registration codes, the second
/// factor `pin1`). Both facades read and write the same user store: a Milagro user and an
/// MFA user may live side by side, told apart by `MPinUser.customerId`.
///
/// Methods return an `MPinStatus` with the SDK's codes; a user in the wrong state for a call
/// is FLOW_ERROR. Not `Sendable`, as `MPinSDK` is not: one instance, and the users it hands
/// out, are used from one thread at a time.
public final class MPinMFA {
    /// The shared core: HTTP, trusted domains, headers, backend, users and their storage.
    let core: MPinSDK

    /// An MFA client over `context`'s transport and stores; `initialize` loads the users.
    public init(context: any PlatformContext) { core = MPinSDK(context: context) }

    // MARK: Initialisation and settings

    /// `initSDK` / `initSDKWithHeaders`: loads the users; sets the backend when the config
    /// names one (`backend`, with `rps_prefix`). A backend may as well be set later, for
    /// example with the URL GetServiceDetails returns.
    public func initialize(config: [String: String] = [:], customHeaders: [String: String] = [:]) -> MPinStatus {
        core.initialize(config: config, customHeaders: customHeaders)
    }

    /// `Destroy`: forgets in-memory state (wiping secrets); storage is untouched.
    public func destroy() { core.destroy() }

    /// `AddCustomHeaders`: sent with every request from now on.
    public func addCustomHeaders(_ headers: [String: String]) { core.addCustomHeaders(headers) }

    /// `ClearCustomHeaders`. The client id (`setClientId`) is kept.
    public func clearCustomHeaders() { core.clearCustomHeaders() }

    /// As `MPinSDK.confine(toOriginOf:)`: every later request must go to `url`'s origin. A host
    /// command whose backend's TLS does not authenticate (plain http) calls it, so that client
    /// settings whoever holds the backend's port sends cannot send a code or a PIN proof
    /// elsewhere (docs/SECURITY.md §3).
    package func confine(toOriginOf url: String) -> Bool { core.confine(toOriginOf: url) }

    /// `AddTrustedDomain`: after this, only https URLs in these domains are contacted.
    public func addTrustedDomain(_ domain: String) { core.addTrustedDomain(domain) }

    /// `ClearTrustedDomains`.
    public func clearTrustedDomains() { core.clearTrustedDomains() }

    /// `SetClientId`: the platform's client id of the application, sent with every request
    /// in `X-MIRACL-Client-ID` (docs/MFA.md §1.2). `/authorize` refuses a request whose header
    /// names another application than its `client_id`.
    public func setClientId(_ clientId: String) { core.setClientId(clientId) }

    /// `TestBackend(url, rpsPrefix)`: fetches the client settings without keeping them.
    public func testBackend(_ server: String, rpsPrefix: String = "rps") -> MPinStatus {
        core.testBackend(server, rpsPrefix: rpsPrefix)
    }

    /// `SetBackend(url, rpsPrefix)`: fetches and keeps the client settings; on failure the
    /// previous backend stays set.
    public func setBackend(_ server: String, rpsPrefix: String = "rps") -> MPinStatus {
        core.setBackend(server, rpsPrefix: rpsPrefix)
    }

    // MARK: Users

    /// `MakeNewUser(identity, deviceName)`: a user in state INVALID, not yet in the list; it
    /// gets its customer at StartRegistration.
    public func makeNewUser(id: String, deviceName: String = "") -> MPinUser { core.makeNewUser(id: id, deviceName: deviceName) }

    /// `IsUserExisting(identity, customerId, appId)`: whether a user with this identity is
    /// registered (or registering) for this customer and application id. `appId` is the
    /// SDK API reference's "for future use": pass "".
    public func isUserExisting(_ id: String, customerId: String, appId: String = "") -> Bool {
        core.users.contains { $0.id == id && $0.customerId == customerId && $0.appId == appId }
    }

    /// `DeleteUser`: forgets the user and its token or regOTT. No server call.
    @discardableResult
    public func deleteUser(_ user: MPinUser) -> MPinStatus { core.deleteUser(user) }

    /// `listUsers`: every user the SDK knows, on every backend and for every customer; filter
    /// them by `backend`, `customerId` and `appId`. Empty before `initialize`.
    public func listUsers() -> [MPinUser] { core.initialized ? core.users : [] }

    // MARK: Services and sessions

    /// `GetServiceDetails(url)`: `GET {url}/service` (docs/MFA.md §3.2). Works before a backend is
    /// set (and before `initialize`): the answer names the backend URL and RPS prefix to set.
    public func getServiceDetails(url: String) -> (status: MPinStatus, details: MPinServiceDetails) {
        core.serviceDetails(url: url)
    }

    /// `GetSessionDetails(accessCode)`: tells the platform the device has the access code and
    /// returns the session's application and customer (docs/MFA.md §4, `"status": "wid"`). A dead
    /// access code (unknown, expired, used, aborted) is INCORRECT_ACCESS_NUMBER.
    public func getSessionDetails(accessCode: String) -> (status: MPinStatus, details: MPinSessionDetails) {
        core.sessionDetails(accessCode: accessCode, context: .codeStatus)
    }

    /// `AbortSession(accessCode)`: ends the session; its access code is dead afterwards.
    public func abortSession(accessCode: String) -> MPinStatus {
        let url: String
        switch core.codeStatusURL() {
        case .failure(let refusal): return refusal
        case .success(let u): url = u
        }
        switch core.request(.post, url, body: CodeStatusRequest.abort(accessCode: accessCode), context: .codeStatus) {
        case .failed(let status, _): return status
        case .ok: return .ok
        }
    }

    /// `GetAccessCode(authzUrl)`: for an app that logs its user into itself. Posts `{}` to the
    /// authorization URL its backend formed (docs/MFA.md §5.2) and cuts the access code after the
    /// last `#` of the answer's `qrURL` (as MIRACL's MfaSDK core does); RESPONSE_PARSE_ERROR
    /// when there is none. Works before a backend is set.
    public func getAccessCode(authzURL: String) -> (status: MPinStatus, accessCode: String) {
        switch core.request(.post, authzURL, body: JSONValue.object([])) {
        case .failed(let status, _): return (status, "")
        case .ok(let value, _):
            let qrURL = WireCoding.lenient(AuthorizeResponse.self, from: value)?.qrURL ?? ""
            guard let hash = qrURL.lastIndex(of: "#") else {
                return (MPinStatus(.responseParseError, "the authorization answer has no access code"), "")
            }
            let code = String(qrURL[qrURL.index(after: hash)...])
            guard !code.isEmpty else { return (MPinStatus(.responseParseError, "the authorization answer has no access code"), "") }
            return (.ok, code)
        }
    }

    // MARK: Registration

    /// `StartRegistration(user, accessCode, [regCode,] pmi)`: `PUT registerURL` with the
    /// access code of the session (and the registration code, when given) in the body. The
    /// user joins the list for the backend's customer as STARTED_REGISTRATION, or ACTIVATED
    /// when the platform skips identity verification (a valid registration code, or
    /// auto-activation). `pmi` (push message identifier, may be empty) is sent with
    /// ConfirmRegistration. A dead access code is INCORRECT_ACCESS_NUMBER, a refused
    /// registration code IDENTITY_NOT_AUTHORIZED.
    public func startRegistration(_ user: MPinUser, accessCode: String, regCode: String = "", pmi: String = "") -> MPinStatus {
        core.startCustomerRegistration(user, accessCode: accessCode, regCode: regCode, appId: "", pushMessageIdentifier: pmi)
    }

    /// `RestartRegistration(user)`: from STARTED_REGISTRATION only; sends the registration
    /// again (the platform sends its verification again).
    public func restartRegistration(_ user: MPinUser) -> MPinStatus { core.restartRegistration(user) }

    /// `ConfirmRegistration(user)`: fetches the client-secret shares once the identity is
    /// verified; IDENTITY_NOT_VERIFIED before.
    public func confirmRegistration(_ user: MPinUser) -> MPinStatus {
        core.confirmRegistration(user, pushMessageIdentifier: user.pushMessageIdentifier)
    }

    /// `FinishRegistration(user, pin0, pin1)`: stores the token with both factors folded out
    /// (docs/MFA.md §10); `pin1` is the optional second factor, empty for none (the SDK API reference's nil),
    /// which stores the Milagro token. The user becomes REGISTERED. The PIN buffers are the
    /// caller's `SecretBytes` and wipe themselves; no copy is kept.
    public func finishRegistration(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes) -> MPinStatus {
        core.finishRegistration(user, pin0: pin0, pin1: pin1)
    }

    // MARK: Authentication

    /// `StartAuthentication(user, accessCode)`: tells the platform which user is about to
    /// authenticate for the session (`"status": "user"`, advisory for the client) and fetches
    /// the time permits. REVOKED when they are refused.
    public func startAuthentication(_ user: MPinUser, accessCode: String) -> MPinStatus {
        core.startAuthentication(user, accessCode: accessCode)
    }

    /// `StartAuthenticationOTP(user)`: as StartAuthentication, with no session.
    public func startAuthenticationOTP(_ user: MPinUser) -> MPinStatus { core.startAuthentication(user) }

    /// `StartAuthenticationRegCode(user)`: as StartAuthentication, with no session.
    public func startAuthenticationRegCode(_ user: MPinUser) -> MPinStatus { core.startAuthentication(user) }

    /// `FinishAuthentication(user, pin0, pin1, accessCode)`: logs the browser session of the
    /// access code in (docs/MFA.md §6). OK, INCORRECT_PIN for a wrong pin0 or pin1 (the third in a
    /// row blocks the user: still INCORRECT_PIN, state BLOCKED), INCORRECT_ACCESS_NUMBER for
    /// a dead access code.
    public func finishAuthentication(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                                     accessCode: String) -> MPinStatus {
        accessCodeLogin(user, pin0: pin0, pin1: pin1, accessCode: accessCode).status
    }

    /// `FinishAuthentication(user, pin, pin1, accessCode, authzCode)`: as FinishAuthentication,
    /// returning the authorization code the platform issued for the session (docs/MFA.md §6), which
    /// the app's backend redeems at `/oidc/token`. RESPONSE_PARSE_ERROR if a successful
    /// answer carries none.
    public func finishAuthenticationAuthzCode(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                                              accessCode: String) -> (status: MPinStatus, authzCode: String) {
        let r = accessCodeLogin(user, pin0: pin0, pin1: pin1, accessCode: accessCode)
        guard r.status.isOK else { return (r.status, "") }
        guard let code = WireCoding.lenient(AuthorizationCodeResponse.self, from: r.result)?.code, !code.isEmpty else {
            return (MPinStatus(.responseParseError, "the platform issued no authorization code"), "")
        }
        return (.ok, code)
    }

    private func accessCodeLogin(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                                 accessCode: String) -> (status: MPinStatus, result: JSONValue) {
        guard !accessCode.isEmpty else { return (MPinStatus(.flowError, "no access code"), .object([])) }
        let r = core.authenticate(user, pin0: pin0, pin1: pin1, otp: false, wid: accessCode, finalStep: .mobile)
        return (r.status, r.result)
    }

    /// `FinishAuthenticationOTP(user, pin, otp)`: authenticates and returns a one-time
    /// password (`otp`, `expireTime`, `ttlSeconds`, `nowTime` in seconds, `status` OK once
    /// issued). `pin1` is the second factor of a user who registered with one.
    public func finishAuthenticationOTP(_ user: MPinUser, pin0: borrowing SecretBytes,
                                        pin1: borrowing SecretBytes = SecretBytes()) -> (status: MPinStatus, otp: MPinOTP) {
        core.finishAuthenticationOTP(user, pin0: pin0, pin1: pin1)
    }

    /// `FinishAuthenticationRegCode(user, pin0, pin1, regCode)`: authenticates and returns a
    /// registration code for another device of the user (docs/MFA.md §8), with the OTP's fields:
    /// `otp` is the code, times in seconds, `status` OK once issued (RESPONSE_PARSE_ERROR for
    /// an unusable answer).
    public func finishAuthenticationRegCode(_ user: MPinUser, pin0: borrowing SecretBytes,
                                            pin1: borrowing SecretBytes) -> (status: MPinStatus, regCode: MPinRegCode) {
        let r = core.authenticate(user, pin0: pin0, pin1: pin1, otp: false, wid: "", finalStep: .platformEndpoint(url: regCodeURL()))
        var code = MPinRegCode()
        guard r.status.isOK else { return (r.status, code) }
        guard let answer = WireCoding.lenient(RegCodeResponse.self, from: r.result), !answer.regCode.isEmpty,
              answer.expireTime > 0, answer.nowTime > 0, answer.ttlSeconds > 0 else {
            code.status = MPinStatus(.responseParseError, "the registration code answer is malformed")
            return (r.status, code)
        }
        code.otp = answer.regCode
        code.expireTime = answer.expireTime / 1000
        code.nowTime = answer.nowTime / 1000
        code.ttlSeconds = answer.ttlSeconds
        code.status = .ok
        return (r.status, code)
    }

    /// Where registration codes are issued: the client settings' `regCodeURL` when the server
    /// names one, else `regCode` beside `registerURL` (`/{p}/user` → `/{p}/regCode`, docs/MFA.md §8).
    func regCodeURL() -> String { core.settings?.url("regCodeURL", besideRegisterURL: "regCode") ?? "" }
}
