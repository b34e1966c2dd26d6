import CoreMetrics
import Prometheus

/// What `/metrics` reports, in Prometheus's text format, through swift-metrics with
/// swift-prometheus's backend. One registry per server (not the process-wide
/// `MetricsSystem`), so that several servers in one process (the tests) keep apart.
///
/// Labels take a few fixed values only: never an identity, an mpinId, a token or anything a
/// client sent.
package final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// How a login's final step ended.
    enum LoginOutcome: String, CaseIterable, Sendable {
        /// The PIN proof verified.
        case ok
        /// A wrong PIN (or a proof that did not verify) below the limit.
        case wrongPIN = "wrong_pin"
        /// Refused because the identity is blocked or revoked, including the attempt that blocks it.
        case blocked
        /// Anything else the final step refused (unknown or expired authOTT, a bad request).
        case refused
    }

    /// The requests of a login whose time the server spends is recorded.
    enum LoginStep: String, CaseIterable, Sendable {
        case pass1, pass2, authenticate
    }

    private let logins: [LoginOutcome: CoreMetrics.Counter]
    private let stepDurations: [LoginStep: CoreMetrics.Timer]
    private let blocks: CoreMetrics.Counter
    private let registrationsStarted: CoreMetrics.Counter
    private let registrationsCompleted: CoreMetrics.Counter
    private let databaseErrors: CoreMetrics.Counter
    private let connectionClosures: [ConnectionClosure: CoreMetrics.Counter]
    private let openConnections: CoreMetrics.Gauge
    private let offlineLoginsOK: CoreMetrics.Counter
    private let offlineLoginsWrongPIN: CoreMetrics.Counter

    package init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // A local login step takes about a millisecond; a loaded server tens.
        factory.durationHistogramBuckets["mpin_login_step_duration_seconds"] = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5),
        ]
        var logins: [LoginOutcome: CoreMetrics.Counter] = [:]
        for outcome in LoginOutcome.allCases {
            logins[outcome] = Counter(label: "mpin_logins_total", dimensions: [("outcome", outcome.rawValue)], factory: factory)
        }
        var steps: [LoginStep: CoreMetrics.Timer] = [:]
        for step in LoginStep.allCases {
            steps[step] = Timer(label: "mpin_login_step_duration_seconds", dimensions: [("step", step.rawValue)],
                                factory: factory)
        }
        self.logins = logins
        self.stepDurations = steps
        blocks = Counter(label: "mpin_blocks_total", factory: factory)
        registrationsStarted = Counter(label: "mpin_registrations_total", dimensions: [("step", "started")], factory: factory)
        registrationsCompleted = Counter(label: "mpin_registrations_total", dimensions: [("step", "completed")],
                                         factory: factory)
        databaseErrors = Counter(label: "mpin_database_errors_total", factory: factory)
        var closures: [ConnectionClosure: CoreMetrics.Counter] = [:]
        for closure in ConnectionClosure.allCases {
            closures[closure] = Counter(label: "mpin_connections_closed_total", dimensions: [("reason", closure.rawValue)],
                                        factory: factory)
        }
        connectionClosures = closures
        openConnections = CoreMetrics.Gauge(label: "mpin_connections_open", factory: factory)
        offlineLoginsOK = Counter(label: "mpin_offline_logins_reported_total", dimensions: [("outcome", "ok")], factory: factory)
        offlineLoginsWrongPIN = Counter(label: "mpin_offline_logins_reported_total", dimensions: [("outcome", "wrong_pin")],
                                        factory: factory)
    }

    /// The text `/metrics` answers with (Prometheus exposition format 0.0.4).
    package func exposition() -> String { registry.emitToString() }

    /// Counts one verdict of a login's final step.
    func recordVerdict(status: Int, blockedNow: Bool) {
        let outcome: LoginOutcome
        switch status {
        case 200: outcome = .ok
        case 401: outcome = .wrongPIN
        case 410: outcome = .blocked
        default: outcome = .refused
        }
        logins[outcome]?.increment()
        if blockedNow { blocks.increment() }
    }

    /// Counts a final step refused before any verdict (no usable authOTT record).
    func recordRefusedLogin() { logins[.refused]?.increment() }

    func recordStep(_ step: LoginStep, _ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        stepDurations[step]?.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    func recordRegistrationStarted() { registrationsStarted.increment() }
    func recordRegistrationCompleted() { registrationsCompleted.increment() }
    func recordDatabaseError() { databaseErrors.increment() }
    /// A connection the server closed of its own accord (a deadline, the connection cap).
    func recordConnectionClosure(_ closure: ConnectionClosure) { connectionClosures[closure]?.increment() }
    func recordOpenConnections(_ count: Int) { openConnections.record(count) }
    /// Offline logins hosts reported, each counted once when first recorded (§4.5.2).
    func recordOfflineLogins(ok: Int, wrongPIN: Int) {
        if ok > 0 { offlineLoginsOK.increment(by: Int64(ok)) }
        if wrongPIN > 0 { offlineLoginsWrongPIN.increment(by: Int64(wrongPIN)) }
    }
}
