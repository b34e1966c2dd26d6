import MPinClient
import MPinCrypto
import MPinJSON

/// One authentication of a Unix user, exactly as the PAM module does it (and `mpinctl auth`):
/// look the user up, ask for the PIN, StartAuthentication + FinishAuthentication, all within
/// the configured time budget.
public struct Login {
    /// What happened; the PAM module maps each to a PAM return code.
    public enum Outcome: Equatable, Sendable {
        case success
        case wrongPIN
        /// The identity is (now) blocked after too many wrong PINs.
        case blocked
        case revoked
        /// No registration for this Unix user (or it is not finished).
        case unknownUser
        /// No PIN was entered (empty, or the conversation failed).
        case pinCanceled
        /// The backend could not be reached in time, or TLS failed: try another method.
        case unavailable(String)
        /// Anything else the backend or the store reported.
        case failed(String)

        public var name: String {
            switch self {
            case .success: "OK"
            case .wrongPIN: "INCORRECT_PIN"
            case .blocked: "BLOCKED"
            case .revoked: "REVOKED"
            case .unknownUser: "USER_UNKNOWN"
            case .pinCanceled: "PIN_INPUT_CANCELED"
            case .unavailable: "UNAVAILABLE"
            case .failed: "FAILED"
            }
        }
    }

    public let config: LoginConfig
    public let platform: any PlatformContext
    /// Receives every step of `run` (see LoginEvent: never a secret). The PAM module's `debug`
    /// option logs them.
    public var trace: ((LoginEvent) -> Void)?

    public init(config: LoginConfig, platform: any PlatformContext, trace: ((LoginEvent) -> Void)? = nil) {
        self.config = config
        self.platform = platform
        self.trace = trace
    }

    /// Runs the login. `askPIN` is called once, after the local checks pass; it returns nil
    /// when no PIN is available. The PIN buffer is wiped before returning.
    public func run(unixUser: String, askPIN: () -> SecretBytes?) -> (outcome: Outcome, identity: String) {
        let started = MonotonicInstant.now
        func finish(_ outcome: Outcome, _ identity: String) -> (outcome: Outcome, identity: String) {
            trace?(.outcome(outcome, duration: .now - started))
            return (outcome, identity)
        }
        let accounts = AccountMap(storage: platform.nonSecureStorage)
        let account: AccountMap.Account
        do {
            guard let a = try accounts.account(for: unixUser) else { return finish(.unknownUser, "") }
            account = a
        } catch {
            return finish(.failed(error.description), "")
        }
        trace?(.account(identity: account.identity, origin: URLHost.of(account.backend)))
        let deadline = MonotonicInstant.now + .milliseconds(Int64(config.timeout * 1000))
        let bounded = BoundedTransport(base: platform.transport, deadline: deadline)
        let tracer = trace.map { TracingTransport(base: bounded, emit: $0) }
        let sdk = MPinSDK(context: LoginPlatform(base: platform, transport: tracer ?? bounded))
        for d in config.trustedDomains { sdk.addTrustedDomain(d) }
        let initStatus = sdk.initialize()
        guard initStatus.isOK else { return finish(Self.outcome(initStatus), account.identity) }
        guard let user = sdk.listUsers(backend: account.backend).1.first(where: { $0.id == account.identity }) else {
            return finish(.unknownUser, account.identity)
        }
        switch user.state {
        case .blocked: return finish(.blocked, account.identity)
        case .registered: break
        default: return finish(.unknownUser, account.identity)
        }
        guard let pin = askPIN(), !pin.isEmpty else { return finish(.pinCanceled, account.identity) }

        // Client settings kept from an earlier login spare a round trip. A login with them that
        // fails for any reason but the PIN or the identity's state (say the backend moved its
        // endpoints) drops them. It runs once more with fresh ones only if it failed before
        // FinishAuthentication: pass 2 carries the PIN proof, and sending it twice could count
        // one wrong PIN twice.
        let cache = SettingsCache(storage: platform.nonSecureStorage, backend: account.backend, rpsPrefix: config.rpsPrefix)
        let cached = cache.read()
        trace?(.settingsCache(hit: cached != nil))
        if let cached {
            let (outcome, reachedPIN) = authenticate(sdk, user, backend: account.backend, pin: pin, cachedSettings: cached,
                                                     tracer: tracer)
            switch outcome {
            case .success, .wrongPIN, .blocked, .revoked: return finish(outcome, account.identity)
            default:
                cache.delete()
                trace?(.settingsDropped(retrying: !reachedPIN))
                if reachedPIN { return finish(outcome, account.identity) }
            }
        }
        let (outcome, _) = authenticate(sdk, user, backend: account.backend, pin: pin, cachedSettings: nil, tracer: tracer)
        switch outcome {
        case .success, .wrongPIN, .blocked, .revoked:
            if let settings = sdk.clientSettingsDocument {
                cache.write(settings)
                trace?(.settingsKept)
            }
        default: break
        }
        return finish(outcome, account.identity)
    }

    /// StartAuthentication + FinishAuthentication, after setting the backend from `cachedSettings`
    /// or from the backend's clientSettings; `reachedPIN` tells whether FinishAuthentication
    /// (which may have sent the PIN proof) ran.
    private func authenticate(_ sdk: MPinSDK, _ user: MPinUser, backend: String, pin: borrowing SecretBytes,
                              cachedSettings: JSONValue?, tracer: TracingTransport?) -> (outcome: Outcome, reachedPIN: Bool) {
        let backendStatus = cachedSettings.map { sdk.setBackend(backend, cachedSettings: $0) }
            ?? sdk.setBackend(backend, rpsPrefix: config.rpsPrefix)
        guard backendStatus.isOK else { return (Self.outcome(backendStatus), false) }
        tracer?.settings = sdk.clientSettingsDocument
        tracer?.markSteps()
        let start = sdk.startAuthentication(user)
        guard start.isOK else { return (Self.outcome(start), false) }
        if tracer?.secondShareFromDevice == true { trace?(.permitShareFromDevice) }
        let finish = sdk.finishAuthentication(user, pin: pin).status
        if finish.code == .incorrectPIN, user.state == .blocked { return (.blocked, true) }
        return (Self.outcome(finish), true)
    }

    static func outcome(_ status: MPinStatus) -> Outcome {
        switch status.code {
        case .ok: .success
        case .incorrectPIN: .wrongPIN
        case .revoked: .revoked
        case .pinInputCanceled: .pinCanceled
        case .networkError, .httpServerError, .untrustedDomainError, .badUserAgent: .unavailable(status.message)
        default: .failed(status.description)
        }
    }
}

/// The platform's stores with the login's own transport (bounded, and traced when asked).
struct LoginPlatform: PlatformContext {
    let base: any PlatformContext
    let transport: any HTTPTransport
    var secureStorage: any SecureStorage { base.secureStorage }
    var nonSecureStorage: any Storage { base.nonSecureStorage }
}

/// Every request's timeout cut to what is left of the login's budget, so the whole
/// authentication ends by the deadline whatever the server does.
struct BoundedTransport: HTTPTransport {
    let base: any HTTPTransport
    let deadline: MonotonicInstant

    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let left = deadline - MonotonicInstant.now
        guard left > .milliseconds(50) else {
            throw .timedOut(host: URLHost.of(request.url), seconds: 0)
        }
        var r = request
        r.timeout = min(request.timeout ?? left, left)
        return try base.send(r)
    }
}

enum URLHost {
    /// `scheme://host[:port]` of an absolute URL for messages and syslog: never its path,
    /// query or user information.
    static func of(_ url: String) -> String {
        guard case .success(let origin) = URLOrigin.parse(url) else { return "the backend" }
        return origin.display
    }
}

extension Login {
    /// Whether the store marks this Unix user's identity BLOCKED (no network).
    public func isBlocked(unixUser: String) -> Bool {
        guard let account = try? AccountMap(storage: platform.nonSecureStorage).account(for: unixUser) else { return false }
        let sdk = MPinSDK(context: platform)
        guard sdk.initialize().isOK else { return false }
        return sdk.listUsers(backend: account.backend).1.contains { $0.id == account.identity && $0.state == .blocked }
    }
}
