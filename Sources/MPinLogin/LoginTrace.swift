import MPinClient
import MPinJSON
import Synchronization

/// One step of a login, for the PAM module's `debug` option (one syslog line each) and for
/// tests. Events carry only what an administrator may read in a log: the identity, backend
/// origins (`scheme://host[:port]`, never a path, query or user information), HTTP statuses,
/// transport error texts (which name at most a host) and durations; never a PIN, a token, an
/// OTT or anything from a request or response body.
package enum LoginEvent: Equatable, Sendable, CustomStringConvertible {
    /// The Unix user logs in as `identity` on the backend at `origin`.
    case account(identity: String, origin: String)
    /// Client settings kept by an earlier login were found (`hit`), or not (none, expired,
    /// damaged, or for another backend).
    case settingsCache(hit: Bool)
    /// A request went to the backend and came back (or failed) after `elapsed`.
    case exchange(LoginStep, origin: String, result: ExchangeResult, elapsed: Duration)
    /// StartAuthentication found the second time-permit share in this device's cache.
    case permitShareFromDevice
    /// A login with kept settings failed: they are dropped. `retrying` tells whether the login
    /// runs once more with fresh ones (only when it failed before FinishAuthentication).
    case settingsDropped(retrying: Bool)
    /// The settings this login used are kept for the next one.
    case settingsKept
    /// The previous backend node failed before the PIN proof; the login goes on at `origin`.
    case failover(to: String)
    /// The login ended with `outcome`, `duration` after it started.
    case outcome(Login.Outcome, duration: Duration)
    /// The backend's REVOKED answer (or a success clearing an earlier one) could not be kept
    /// with the account, for the store's reason.
    case revocationNotRecorded(String)
    /// Every backend node was unreachable: the PIN goes to the offline check (OfflineLogins).
    case offline

    package var description: String {
        switch self {
        case .account(let identity, let origin): "identity \(identity) on \(origin)"
        case .settingsCache(let hit): hit ? "client settings: kept from an earlier login" : "client settings: none kept, fetching"
        case .exchange(let step, let origin, let result, let elapsed):
            "\(step.rawValue): \(result) from \(origin) in \(Self.milliseconds(elapsed)) ms"
        case .permitShareFromDevice: "time permit (D-TA share): cached on this device"
        case .settingsDropped(let retrying):
            retrying ? "kept client settings dropped; retrying with fresh ones" : "kept client settings dropped"
        case .settingsKept: "client settings kept for the next login"
        case .failover(let origin): "backend node failed before the PIN proof; trying \(origin)"
        case .outcome(let outcome, let duration): "outcome \(outcome.name) after \(Self.milliseconds(duration)) ms"
        case .revocationNotRecorded(let why): "the account's state (revoked, attempts left) could not be recorded: \(why)"
        case .offline: "every backend node is unreachable: checking the PIN offline, with the TPM"
        }
    }

    static func milliseconds(_ d: Duration) -> Int64 {
        let c = d.components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }
}

/// Which request of the protocol an exchange was.
package enum LoginStep: String, Sendable {
    case clientSettings = "client settings"
    case timePermit = "time permit (RPS share)"
    case permitStore = "time permit (share store)"
    case dtaTimePermit = "time permit (D-TA share)"
    case pass1 = "pass 1"
    case pass2 = "pass 2"
    case authenticate = "authenticate"
    case other = "other request"
}

/// How an exchange ended: an HTTP status, or the transport's error text.
package enum ExchangeResult: Equatable, Sendable, CustomStringConvertible {
    case status(Int)
    case failed(String)

    package var description: String {
        switch self {
        case .status(let code): "HTTP \(code)"
        case .failed(let why): "failed (\(why))"
        }
    }
}

/// Reports each request of a login as a `LoginEvent.exchange`, named from the client settings
/// in use. Safe from any thread, as `HTTPTransport` promises: the settings and the steps are
/// under a lock, and `emit` is `@Sendable`.
package final class TracingTransport: HTTPTransport {
    let base: any HTTPTransport
    let emit: @Sendable (LoginEvent) -> Void
    /// The client settings in use (relative URLs resolved) once the backend is set, and the
    /// steps requested since the last `markSteps`.
    private let state = Mutex<(settings: JSONValue?, stepsSinceMark: [LoginStep])>((nil, []))

    package init(base: any HTTPTransport, emit: @escaping @Sendable (LoginEvent) -> Void) {
        self.base = base
        self.emit = emit
    }

    /// The client settings in use (relative URLs resolved), once the backend is set.
    package var settings: JSONValue? {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    package func markSteps() { state.withLock { $0.stepsSinceMark = [] } }

    /// Whether the steps since the mark fetched the RPS's time-permit share but asked nobody
    /// for the second one: StartAuthentication took it from the device's cache.
    package var secondShareFromDevice: Bool {
        state.withLock { state in
            let steps = state.stepsSinceMark
            return steps.contains(.timePermit) && !steps.contains(.dtaTimePermit) && !steps.contains(.permitStore)
        }
    }

    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let step = self.step(of: request.url)
        state.withLock { $0.stepsSinceMark.append(step) }
        let origin = URLHost.of(request.url)
        let started = MonotonicInstant.now
        do {
            let response = try base.send(request)
            emit(.exchange(step, origin: origin, result: .status(response.status), elapsed: .now - started))
            return response
        } catch {
            emit(.exchange(step, origin: origin, result: .failed(error.description), elapsed: .now - started))
            throw error
        }
    }

    /// The step a URL belongs to, by the client settings' endpoints, as the core builds its
    /// requests: `mpinAuthServerURL` + `/pass1` and `/pass2`, `authenticateURL`,
    /// `timePermitsURL/<mpinId>`, `timePermitsStorageURL/...` and `certivoxURL` + `timePermit?...`.
    package func step(of url: String) -> LoginStep {
        if case .success(let parts) = URLOrigin.parse(url), parts.path.hasSuffix("/clientSettings") { return .clientSettings }
        guard let settings = self.settings else { return .other }
        func endpoint(_ key: String) -> String? { settings[key]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        if let server = endpoint("mpinAuthServerURL") {
            if url == server + "/pass1" { return .pass1 }
            if url == server + "/pass2" { return .pass2 }
        }
        if let final = endpoint("authenticateURL"), url == final { return .authenticate }
        if let permits = endpoint("timePermitsURL"), url.hasPrefix(permits + "/") { return .timePermit }
        if let store = endpoint("timePermitsStorageURL"), url.hasPrefix(store + "/") { return .permitStore }
        if let dta = endpoint("certivoxURL"), url.hasPrefix(dta + "timePermit") { return .dtaTimePermit }
        return .other
    }
}
