import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// Which roles a process hosts.
public enum ServerRole: Sendable, Equatable {
    /// RPS, authentication server and both D-TAs in one process (the default).
    case all
    /// The RPS alone, reaching D-TA 1 at `dta1URL` and telling clients to fetch their second
    /// shares from `dta2URL` (absolute, ending in `/`).
    case rps(dta1URL: String, dta2URL: String)
    /// One D-TA alone (index 1 or 2), serving Appendix A at the root.
    case dta(index: Int)
}

/// The backend over one data directory: by default every role in one process.
public final class MPinServer: Sendable {
    let routes: ServerRoutes
    let storage: (any ServerStorage)?
    public let host: String
    public let port: Int
    let logger: Logger

    /// Loads the data directory (config, key files, database) and, for the RPS, recombines the
    /// server secret from both D-TAs. Port 0 picks a free port (see `RunningServer.port`).
    public init(dataDirectory: String, host: String = "127.0.0.1", port: Int = 8005, role: ServerRole = .all,
                logger: Logger = Logger(label: "mpin-server")) async throws {
        let dir = DataDirectory(path: dataDirectory)
        let config = try dir.loadConfig()
        let key = try dir.loadAppKey()
        func dta(_ i: Int) throws -> DTA { DTA(index: i, appID: config.appID, appKey: key, share: try dir.loadShare(i)) }
        switch role {
        case .dta(let index):
            guard index == 1 || index == 2 else { throw SetupError.io("D-TA index must be 1 or 2") }
            routes = ServerRoutes(standaloneDTA: try dta(index), maxBodyBytes: config.maxBodyBytes)
            storage = nil
        case .all, .rps:
            // Transactions run on the request's thread: a lock held elsewhere (the `user`
            // command) may stall it at most this long before the request fails with 503.
            let storage = try dir.openStorage(busyTimeout: 2)
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
                                    storage: storage, spool: MailSpool(path: dir.spoolPath, logger: logger), logger: logger)
            let oidc = OIDCProvider(storage: storage, config: config, key: try await OIDCKey(pem: try dir.loadOrCreateOIDCKey()),
                                    logger: logger)
            routes = ServerRoutes(rps: rps, embeddedDTA: embedded, oidc: oidc, maxBodyBytes: config.maxBodyBytes)
            self.storage = storage
        }
        self.host = host; self.port = port; self.logger = logger
    }

    /// The HTTP server with the services that live as long as it (the purge of expired records).
    private func application(onRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let services: [any Service] = storage.map { [PurgeService(storage: $0, logger: logger)] } ?? []
        return Application(
            router: routes.router(logger: logger),
            configuration: .init(address: .hostname(host, port: port), serverName: "mpin-server"),
            services: services,
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, then stops gracefully. Logs one line when ready.
    public func serve() async throws {
        let logger = logger, host = host
        try await application { port in
            logger.info("mpin-server ready", metadata: ["url": "http://\(host):\(port)"])
        }.runService()
    }

    /// Starts serving in the background (for tests and embedding); stop with `stop()`.
    public func start() async throws -> RunningServer {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = application { port in continuation.yield(port); continuation.finish() }
        let task = Task { try await app.run() }
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
public final class RunningServer: Sendable {
    /// The bound port.
    public let port: Int
    private let task: Task<Void, any Error>

    init(port: Int, task: Task<Void, any Error>) { self.port = port; self.task = task }

    /// Stops the server (and its services) and waits until it has closed its socket.
    public func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}
