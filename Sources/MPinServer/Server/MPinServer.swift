import Foundation
import Hummingbird
package import Logging
import ServiceLifecycle
import UnixSignals

/// Which roles a process hosts.
package enum ServerRole: Sendable, Equatable {
    /// RPS, authentication server and both D-TAs in one process (the default).
    case all
    /// The RPS alone, reaching D-TA 1 at `dta1URL` and telling clients to fetch their second
    /// shares from `dta2URL` (absolute, ending in `/`).
    case rps(dta1URL: String, dta2URL: String)
    /// One D-TA alone (index 1 or 2), serving Appendix A at the root.
    case dta(index: Int)
}

/// The backend over one data directory: by default every role in one process.
package final class MPinServer: Sendable {
    let routes: ServerRoutes
    let storage: (any ServerStorage)?
    /// The opened database (nil for a D-TA alone), closed when the server stops.
    let database: ServerDatabase?
    /// What `/metrics` reports.
    package let metrics: ServerMetrics
    package let host: String
    package let port: Int
    let logger: Logger
    /// The certificate and key files and the context made from them; nil for plain HTTP.
    let tls: (files: TLSFiles, box: TLSContextBox)?
    /// `DIR/metrics.token`: opens `/metrics` to other addresses than loopback.
    let metricsToken: String?
    /// The issuer of the OpenID provider without publicBaseURL (set when the server listens).
    let listenBase = ListenBase()
    /// Every open connection, under config.json's cap and deadlines (docs/SECURITY.md §5).
    let connections: ConnectionTable

    /// `https` or `http`.
    package var scheme: String { tls == nil ? "http" : "https" }

    /// Loads the data directory (config, key files, database) and, for the RPS, recombines the
    /// server secret from both D-TAs. Port 0 picks a free port (see `RunningServer.port`).
    /// `tls`: the certificate and key to serve HTTPS with, instead of those config.json names
    /// (if any); they are checked here (`TLSSetupError`).
    package init(dataDirectory: String, host: String = "127.0.0.1", port: Int = 8005, role: ServerRole = .all,
                tls: TLSFiles? = nil, logger: Logger = Logger(label: "mpin-server")) async throws {
        let dir = DataDirectory(path: dataDirectory)
        let config = try dir.loadConfig()
        metricsToken = try dir.loadMetricsToken()
        let metrics = ServerMetrics()
        self.metrics = metrics
        connections = ConnectionTable(limits: ConnectionLimits(config: config), metrics: metrics, logger: logger)
        if let files = try tls ?? dir.tlsFiles(config) {
            let credentials = try TLSCredentials.load(files)
            if credentials.notValidAfter < Date() {
                logger.warning("the TLS certificate has expired", metadata: [
                    "certificate": "\(files.certificatePath)", "notValidAfter": "\(credentials.notValidAfter)"])
            }
            self.tls = (files, TLSContextBox(credentials))
        } else {
            self.tls = nil
            // Plain HTTP where other hosts can reach it, only when the administrator said so.
            if !Self.isLoopback(host), config.allowPlainHTTP != true { throw SetupError.plainHTTPOnNetwork(host) }
        }
        let key = try dir.loadAppKey()
        func dta(_ i: Int) throws -> DTA { DTA(index: i, appID: config.appID, appKey: key, share: try dir.loadShare(i)) }
        switch role {
        case .dta(let index):
            guard index == 1 || index == 2 else { throw SetupError.io("D-TA index must be 1 or 2") }
            routes = ServerRoutes(standaloneDTA: try dta(index), maxBodyBytes: config.maxBodyBytes)
            storage = nil
            database = nil
        case .all, .rps:
            // A write waits at most this long for a lock held elsewhere (the `user` command)
            // before the request fails with 503; it waits on GRDB's writer thread, not on an
            // event loop. PostgreSQL's pool runs in the server's service group (`application`).
            let database = try await dir.openDatabase(config: config, busyTimeout: 2, inServiceGroup: true, logger: logger)
            let storage = database.backend
            do {
                let d1: any DTAEndpoint, d2: any DTAEndpoint, embedded: DTA?, certivox: String
                if case .rps(let u1, let u2) = role {
                    d1 = RemoteDTA(base: u1); d2 = RemoteDTA(base: u2); embedded = nil
                    certivox = u2.hasSuffix("/") ? u2 : u2 + "/"
                } else {
                    let second = try dta(2)
                    d1 = LocalDTA(dta: try dta(1)); d2 = LocalDTA(dta: second); embedded = second
                    certivox = "/dta/"
                }
                let rps = try await RPS(config: config, appKey: key, dta1: d1, dta2: d2, certivoxURL: certivox,
                                        storage: storage, spool: MailSpool(path: dir.spoolPath, logger: logger), logger: logger,
                                        metrics: metrics, verdictKey: try dir.loadOrCreateVerdictKey())
                // A node of a shared database that makes its RSA key now (a directory from before
                // RS256) would sign with a key the other nodes do not publish: say so.
                if database.isShared, !FileManager.default.fileExists(atPath: dir.oidcRSAKeyPath) {
                    logger.warning("made a new OIDC RS256 key: copy it to every other node of this database before they start",
                                   metadata: ["file": "\(dir.oidcRSAKeyPath)"])
                }
                // Without publicBaseURL the issuer is the address listened on (docs/MFA.md §7.2).
                let oidc = OIDCProvider(storage: storage, config: config, key: try await dir.loadOIDCKeys(),
                                        scheme: self.tls == nil ? "http" : "https", listenBase: listenBase,
                                        logger: logger)
                routes = ServerRoutes(rps: rps, embeddedDTA: embedded, oidc: oidc, maxBodyBytes: config.maxBodyBytes)
            } catch {
                await database.close()
                throw error
            }
            self.storage = storage
            self.database = database
        }
        self.host = host; self.port = port; self.logger = logger
    }

    /// The HTTP server with the services that live as long as it (the purge of expired records,
    /// the TLS reload on SIGHUP when `reloadSignals` is given).
    private func application(reloadSignals: UnixSignalsSequence? = nil,
                             onRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        // The database's own service first: a service group stops its services in reverse
        // order, so the pool closes after the purge and after the server have stopped.
        var services: [any Service] = database?.backend.service.map { [$0] } ?? []
        if let storage { services.append(PurgeService(storage: storage, logger: logger)) }
        if let reloadSignals {
            services.append(TLSReloadService(tls: tls, signals: reloadSignals, logger: logger))
        }
        return Application(
            router: routes.router(logger: logger, metrics: metrics, storage: storage, metricsToken: metricsToken),
            server: tls.map { .reloadableTLS($0.box, connections) } ?? .http1OnEventLoop(connections),
            configuration: .init(address: .hostname(host, port: port), serverName: "mpin-server"),
            services: services,
            onServerRunning: { [listenBase, scheme, host] channel in
                listenBase.set(scheme: scheme, host: host, port: channel.localAddress?.port ?? 0)
                await onRunning(channel.localAddress?.port ?? 0)
            },
            // Hummingbird sets a request id on a copy of this logger for every request.
            logger: logger.withRequestMetadataKeptApart)
    }

    /// Serves until SIGTERM or SIGINT, then stops gracefully. Logs one line when ready. With
    /// TLS, SIGHUP reloads the certificate and key (connections already open keep theirs).
    package func serve() async throws {
        let logger = logger, host = host, scheme = scheme
        if let tls {
            logger.info("TLS certificate loaded", metadata: [
                "certificate": "\(tls.files.certificatePath)", "sha256": "\(tls.box.credentials.fingerprint)",
                "notValidAfter": "\(tls.box.credentials.notValidAfter)"])
        } else if !Self.isLoopback(host) {
            logger.warning("serving plain HTTP on a network address: give --tls-cert and --tls-key", metadata: ["host": "\(host)"])
        }
        // Trapped before the server listens: a SIGHUP after the ready line never terminates it
        // (without TLS there is nothing to reload, and it is only logged).
        let signals = await UnixSignalsSequence(trapping: .sighup)
        if let database {
            logger.info("database", metadata: ["database": "\(database.name)"])
        }
        let limits = connections.limits
        logger.info("connection limits", metadata: [
            "maxConnections": "\(limits.maxConnections)", "descriptorLimit": "\(ConnectionLimits.descriptorLimit())",
            "headerTimeout": "\(limits.headerTimeout)", "bodyTimeout": "\(limits.bodyTimeout)",
            "idleTimeout": "\(limits.idleTimeout)"])
        do {
            try await application(reloadSignals: signals) { port in
                logger.info("mpin-server ready", metadata: ["url": "\(scheme)://\(host):\(port)"])
                SystemdNotify.ready()
            }.runService()
        } catch {
            await database?.close()
            throw error
        }
        await database?.close()
    }

    /// Reads the certificate and key files again and, when they pass the checks of a start,
    /// uses them for new connections (what SIGHUP does). Throws, keeping the current ones, if not.
    package func reloadTLS() throws {
        guard let tls else { return }
        try tls.box.reload(from: tls.files)
    }

    /// The connection cap and deadlines in force.
    package var connectionLimits: ConnectionLimits { connections.limits }

    /// SHA-256 (hex) of the certificate new connections get; nil without TLS.
    package var tlsCertificateFingerprint: String? { tls?.box.credentials.fingerprint }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Starts serving in the background (for tests and embedding); stop with `stop()`.
    package func start() async throws -> RunningServer {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = application { port in continuation.yield(port); continuation.finish() }
        let database = database
        let task = Task {
            do { try await app.run() } catch {
                await database?.close()
                throw error
            }
            await database?.close()
        }
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next(), port != 0 else {
            task.cancel()
            _ = try? await task.value
            throw SetupError.io("server did not start")
        }
        return RunningServer(port: port, task: task)
    }
}

/// A server started with `MPinServer.start()`.
package final class RunningServer: Sendable {
    /// The bound port.
    package let port: Int
    private let task: Task<Void, any Error>

    init(port: Int, task: Task<Void, any Error>) { self.port = port; self.task = task }

    /// Stops the server (and its services) and waits until it has closed its socket.
    package func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
