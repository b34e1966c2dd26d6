import MPinClient
import MPinCrypto
import MPinJSON
import Synchronization

/// One authentication of a Unix user, exactly as the PAM module does it (and `mpinctl auth`):
/// look the user up, ask for the PIN, StartAuthentication + FinishAuthentication, all within
/// the configured time budget.
package struct Login {
    /// What happened; the PAM module maps each to a PAM return code.
    package enum Outcome: Equatable, Sendable {
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

        package var name: String {
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

    package let config: LoginConfig
    package let platform: any PlatformContext
    /// Receives every step of `run` (see LoginEvent: never a secret). The PAM module's `debug`
    /// option logs them. Sendable because the login's transport (TracingTransport) calls it.
    package var trace: (@Sendable (LoginEvent) -> Void)?
    /// Offline logins (`offline = yes`): enrolled at an online success, tried when every node is
    /// unreachable. Nil when they are off; a REVOKED or BLOCKED answer removes a user's offline
    /// record either way.
    package var offline: OfflineLogins?

    package init(config: LoginConfig, platform: any PlatformContext, trace: (@Sendable (LoginEvent) -> Void)? = nil) {
        self.config = config
        self.platform = platform
        self.trace = trace
    }

    /// Runs the login. `askPIN` is called once, after the local checks pass; it returns nil
    /// when no PIN is available. The PIN buffer is wiped before returning.
    package func run(unixUser: String, askPIN: () -> SecretBytes?) -> (outcome: Outcome, identity: String) {
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
        // `timeout` bounds what the backend may cost the login, not the user's time to type the
        // PIN: no request is sent before the PIN is asked, and the budget starts again after it.
        let budget = Duration.milliseconds(Int64(config.timeout * 1000))
        let deadline = LoginDeadline(.now + budget)
        let bounded = BoundedTransport(base: platform.transport, deadline: deadline)
        let nodes = config.nodes(for: account.backend)

        // The local checks (registration, state) need no network: they run on the first
        // node's SDK, before the PIN is asked.
        var node = NodeAttempt(login: self, base: bounded)
        let initStatus = node.sdk.initialize()
        guard initStatus.isOK else { return finish(Self.outcome(initStatus), account.identity) }
        guard let firstUser = node.user(account) else { return finish(.unknownUser, account.identity) }
        switch firstUser.state {
        case .blocked:
            // A host's token is kept when blocked: its backend alone can say it was unblocked.
            guard node.sdk.mayAskAfterBlock(firstUser) else { return finish(.blocked, account.identity) }
        case .registered: break
        default: return finish(.unknownUser, account.identity)
        }
        // A verdict that will not be signed is believed only through TLS with a pinned CA:
        // refused before the PIN is asked (docs/SECURITY.md §6.1).
        if firstUser.verdictKeyHex.isEmpty, let refusal = config.unsignedVerdictRefusal(for: nodes) {
            return finish(.failed(refusal), account.identity)
        }
        guard let pin = askPIN(), !pin.isEmpty else { return finish(.pinCanceled, account.identity) }
        deadline.restart(budget: budget)

        // Failover: a node that failed before FinishAuthentication (which carries the PIN
        // proof) is left for the next one, within the one budget; a node that may have seen
        // pass 2 is never abandoned, since a second node would count one wrong PIN twice.
        var outcome = Outcome.unavailable("no backend node answered")
        var attemptsLeft: Int? = nil
        // Nodes that were tried and never answered for a reason of the network (refused, timed
        // out, no route, no name): offline logins only when that is every node.
        var unreachable = 0
        // Offline logins made on this host since the user's last online login go to the
        // backend with this login's final step (docs/PROTOCOL.md §4.5.2).
        // Only a registration with a pinned verdict key sends one (its acknowledgment is signed).
        let report = firstUser.verdictKeyHex.isEmpty ? nil : offline?.pendingReport(identity: account.identity)
        var recorded: Int? = nil
        for (index, url) in nodes.enumerated() {
            if index > 0 {
                trace?(.failover(to: URLHost.of(url)))
                node = NodeAttempt(login: self, base: bounded)
                guard node.sdk.initialize().isOK else { break }
            }
            guard let user = node.user(account) else { break }
            node.sdk.serveUsers(of: index > 0 ? account.backend : nil)
            // Without TLS that names the backend, every request stays on the node's own origin,
            // whatever client settings say (kept or fetched): an answer from whoever held the
            // port once cannot send a login elsewhere (docs/SECURITY.md §3).
            if !config.authenticatesByTLS(url), !node.sdk.confine(toOriginOf: url) { break }
            node.sdk.offlineReport = report
            let (result, reachedPIN) = attempt(node, user, backend: url, pin: pin)
            outcome = result
            attemptsLeft = user.attemptsLeft
            recorded = node.sdk.offlineLoginsRecorded
            if node.firstAnswer.isUnreachable(url) { unreachable += 1 }
            guard case .unavailable = result, !reachedPIN, MonotonicInstant.now < deadline.instant else { break }
        }
        // A REVOKED answer is kept with the account, for account management (no network
        // there); a later success clears it. The login's outcome does not depend on the write.
        // So is a signed count of the attempts left after a wrong PIN, for the next prompt.
        var marked = account
        if outcome == .revoked || (outcome == .success && account.revoked) { marked.revoked = outcome == .revoked }
        if outcome == .wrongPIN || outcome == .success { marked.attemptsLeft = outcome == .wrongPIN ? attemptsLeft : nil }
        if outcome == .blocked || outcome == .success || outcome == .wrongPIN { marked.blocked = outcome == .blocked }
        if marked != account {
            do { try accounts.set(marked, for: unixUser) } catch { trace?(.revocationNotRecorded(error.description)) }
        }
        // Offline logins, after the account's state is kept from the backend's answer: an
        // offline outcome changes nothing there (no revocation, no attempts left).
        switch outcome {
        case .success:
            offline?.onlineSuccess(identity: account.identity, pin: pin, report: report, recorded: recorded)
        case .revoked, .blocked:
            // Believed only when signed with the pinned key or through TLS with the configured
            // CA (an unsigned one is `failed`): the backend stays the authority offline too.
            let forgetting = offline ?? OfflineLogins(config: config, storage: platform.nonSecureStorage)
            forgetting.forget(identity: account.identity, because: outcome == .revoked ? "revoked" : "blocked")
        case .unavailable where offline != nil && unreachable == nodes.count:
            trace?(.offline)
            outcome = offline!.unreachable(identity: account.identity, pin: pin)
        default:
            break
        }
        return finish(outcome, account.identity)
    }

    /// One node's try: with the settings kept from an earlier login when there are some, then,
    /// if that failed before the PIN proof for a reason other than the node being silent, with
    /// fresh ones. Client settings kept from an earlier login spare a round trip; a login with
    /// them that fails for any reason but the PIN or the identity's state (say the backend
    /// moved its endpoints) drops them.
    private func attempt(_ node: NodeAttempt, _ user: MPinUser, backend: String,
                         pin: borrowing SecretBytes) -> (outcome: Outcome, reachedPIN: Bool) {
        let cache = SettingsCache(storage: platform.nonSecureStorage, backend: backend, rpsPrefix: config.rpsPrefix)
        let cached = cache.read()
        trace?(.settingsCache(hit: cached != nil))
        if let cached {
            let (outcome, reachedPIN) = authenticate(node.sdk, user, backend: backend, pin: pin, cachedSettings: cached,
                                                     tracer: node.tracer)
            switch outcome {
            case .success, .wrongPIN, .blocked, .revoked: return (outcome, reachedPIN)
            default:
                // A node that did not answer is down, not changed: its settings stay kept,
                // and asking it again would only spend the budget.
                guard !node.firstAnswer.isSilent(backend) else { return (outcome, reachedPIN) }
                cache.delete()
                trace?(.settingsDropped(retrying: !reachedPIN))
                if reachedPIN { return (outcome, true) }
            }
        }
        let (outcome, reachedPIN) = authenticate(node.sdk, user, backend: backend, pin: pin, cachedSettings: nil,
                                                 tracer: node.tracer)
        // Kept only after an answer the host authenticated: these outcomes are believed only
        // with the pinned key's signature (Authentication.swift), or through TLS with the CA
        // named in mpin.conf; an unsigned one comes back as `failed` and keeps nothing.
        let authenticated = !user.verdictKeyHex.isEmpty || config.authenticatesByTLS(backend)
        if authenticated, [.success, .wrongPIN, .blocked, .revoked].contains(outcome),
           let settings = node.sdk.clientSettingsDocument {
            cache.write(settings)
            trace?(.settingsKept)
        }
        return (outcome, reachedPIN)
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

/// The SDK and transports of one login's try on one backend node.
struct NodeAttempt {
    let sdk: MPinSDK
    let firstAnswer: FirstAnswerTransport
    let tracer: TracingTransport?

    init(login: Login, base: BoundedTransport) {
        let firstAnswer = FirstAnswerTransport(base: base, limit: .milliseconds(Int64(login.config.connectTimeout * 1000)))
        let tracer = login.trace.map { TracingTransport(base: firstAnswer, emit: $0) }
        let sdk = MPinSDK(context: LoginPlatform(base: login.platform, transport: tracer ?? firstAnswer))
        for d in login.config.trustedDomains { sdk.addTrustedDomain(d) }
        self.firstAnswer = firstAnswer
        self.tracer = tracer
        self.sdk = sdk
    }

    /// The account's registered user in this SDK's store.
    func user(_ account: AccountMap.Account) -> MPinUser? {
        sdk.listUsers(backend: account.backend).1.first { $0.id == account.identity }
    }
}

/// Until an origin has answered once, each request to it may wait only `limit`
/// (`connect_timeout`): a dead or black-holed node then costs that, not the login's whole
/// budget. Later requests get the budget's remainder.
final class FirstAnswerTransport: HTTPTransport {
    let base: any HTTPTransport
    let limit: Duration
    /// Origins (`scheme://host[:port]`) that sent an HTTP answer, whatever its status, and
    /// those that a request reached no answer from (refused, timed out, reset); locked, as
    /// `HTTPTransport` promises calls from several threads at once.
    private let origins = Mutex<(answered: Set<String>, silent: Set<String>, unreachable: Set<String>)>(([], [], []))

    init(base: any HTTPTransport, limit: Duration) { self.base = base; self.limit = limit }

    /// Whether `url`'s origin failed to answer a request, and never answered one.
    func isSilent(_ url: String) -> Bool {
        let origin = URLHost.of(url)
        return origins.withLock { $0.silent.contains(origin) && !$0.answered.contains(origin) }
    }

    /// Whether `url`'s origin never answered and a request to it failed for a reason of the
    /// network only: refused, timed out, no route, no name. Not a TLS failure (someone answered),
    /// an untrusted domain or a refused URL (nothing was tried).
    func isUnreachable(_ url: String) -> Bool {
        let origin = URLHost.of(url)
        return origins.withLock { $0.unreachable.contains(origin) && !$0.answered.contains(origin) }
    }

    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let origin = URLHost.of(request.url)
        var r = request
        if !origins.withLock({ $0.answered.contains(origin) }) { r.timeout = min(request.timeout ?? limit, limit) }
        do {
            let response = try base.send(r)
            origins.withLock { _ = $0.answered.insert(origin) }
            return response
        } catch {
            origins.withLock {
                _ = $0.silent.insert(origin)
                switch error {
                case .hostNotFound, .connectionRefused, .connectionFailed, .timedOut: _ = $0.unreachable.insert(origin)
                default: break
                }
            }
            throw error
        }
    }
}

/// When a login's network part must be over. It can start again (`restart`): the login
/// starts it once more after the PIN is typed, since the user's time to answer is not the
/// backend's.
final class LoginDeadline: Sendable {
    private let value: Mutex<MonotonicInstant>

    init(_ instant: MonotonicInstant) { value = Mutex(instant) }

    var instant: MonotonicInstant { value.withLock { $0 } }

    func restart(budget: Duration) { value.withLock { $0 = .now + budget } }
}

/// Every request's timeout cut to what is left of the login's budget, so the whole
/// authentication ends by the deadline whatever the server does.
struct BoundedTransport: HTTPTransport {
    let base: any HTTPTransport
    let deadline: LoginDeadline

    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let left = deadline.instant - MonotonicInstant.now
        guard left > .milliseconds(50) else {
            throw .timedOut(host: URLHost.of(request.url), seconds: 0)
        }
        var r = request
        r.timeout = min(request.timeout ?? left, left)
        return try base.send(r)
    }
}

package enum URLHost {
    /// `scheme://host[:port]` of an absolute URL for messages and syslog: never its path,
    /// query or user information.
    package static func of(_ url: String) -> String {
        guard case .success(let origin) = URLOrigin.parse(url) else { return "the backend" }
        return origin.display
    }
}

extension Login {
    /// What the store says of a Unix user's identity, for account management (no network).
    package enum AccountState: String, Equatable, Sendable {
        /// No registration or link for this Unix user.
        case unregistered
        /// Registered here with a token, usable.
        case registered
        /// Linked for device logins (no token here).
        case linked
        /// The token here is BLOCKED (too many wrong PINs).
        case blocked
        /// The backend answered REVOKED to a login.
        case revoked
        /// A registration that is not finished (no usable token).
        case incomplete
    }

    /// Why the state could not be read: the store or the SDK failed. `permissionDenied` when the
    /// store refused this process (EACCES/EPERM: a caller that is not root).
    package struct AccountStateError: Error, Equatable, Sendable, CustomStringConvertible {
        package let description: String
        package let permissionDenied: Bool
        package init(_ description: String, permissionDenied: Bool = false) {
            self.description = description
            self.permissionDenied = permissionDenied
        }
    }

    /// The state of `unixUser`'s identity in the store; an unreadable store or account map is an
    /// error, never "no opinion" (docs/SECURITY.md §6.12).
    package func accountState(unixUser: String) throws(AccountStateError) -> AccountState {
        let account: AccountMap.Account
        do {
            guard let a = try AccountMap(storage: platform.nonSecureStorage).account(for: unixUser) else { return .unregistered }
            account = a
        } catch {
            throw AccountStateError(error.description, permissionDenied: error.isPermissionDenied)
        }
        if account.revoked { return .revoked }
        if account.linked { return .linked }
        let sdk = MPinSDK(context: platform)
        let status = sdk.initialize()
        guard status.isOK else { throw AccountStateError(status.description) }
        guard let user = sdk.listUsers(backend: account.backend).1.first(where: { $0.id == account.identity }) else {
            return .incomplete
        }
        switch user.state {
        case .blocked: return .blocked
        case .registered: return .registered
        default: return .incomplete
        }
    }

    /// Whether the store marks this Unix user's identity BLOCKED (no network); false also when
    /// the store cannot be read (account management uses `accountState`, which says why).
    package func isBlocked(unixUser: String) -> Bool {
        (try? accountState(unixUser: unixUser)) == .blocked
    }
}
