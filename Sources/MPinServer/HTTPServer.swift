import Foundation
import Hummingbird
import Logging
import MPinWire

/// Maps HTTP requests to the roles. Every failure becomes a JSON error with a 4xx status
/// (5xx only for the server's own faults); nothing a client sends can crash the process.
struct Dispatcher: HTTPResponder {
    typealias Context = BasicRequestContext
    /// The RPS with the authentication server and demo-RPA endpoints, when hosted.
    let rps: RPS?
    /// The second D-TA under `/dta/`, when embedded with the RPS.
    let embeddedDTA: DTAHandlers?
    /// A D-TA running alone, served at the root as in Appendix A.
    let standaloneDTA: DTAHandlers?
    let maxBodyBytes: Int

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        var request = request
        let method = request.method
        if method == .options {
            return json(200, StatusResponse(message: "options request"))
        }
        let body: [UInt8]
        do {
            let buffer = try await request.collectBody(upTo: maxBodyBytes)
            body = Array(buffer.readableBytesView)
        } catch {
            return failure(ServerError(413, "Request body too large"))
        }
        do {
            return try await route(method: method, path: request.uri.path, query: request.uri.query, body: body)
        } catch {
            return failure(error)
        }
    }

    private func route(method: HTTPRequest.Method, path: String, query: String?, body: [UInt8]) async throws(ServerError) -> Response {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        func allow(_ m: HTTPRequest.Method) throws(ServerError) {
            guard method == m else { throw ServerError(405, "Method not allowed") }
        }
        if let dta = standaloneDTA {
            guard parts.count == 1 else { throw ServerError(404, "URI NOT FOUND") }
            try allow(.get)
            return try routeDTA(dta, endpoint: parts[0], query: query)
        }
        if parts.count == 2, parts[0] == "dta", let dta = embeddedDTA {
            try allow(.get)
            return try routeDTA(dta, endpoint: parts[1], query: query)
        }
        guard let rps else { throw ServerError(404, "URI NOT FOUND") }
        let p = rps.config.rpsPrefix
        switch (parts.first, parts.count) {
        case ("status", 1):
            try allow(.get)
            return json(200, StatusResponse(message: "active"))
        case ("mpinAuthenticate", 1):
            try allow(.post)
            let r = try await rps.rpaAuthenticate(body: body)
            return json(r.status, r.body)
        case ("authenticate", 1):
            try allow(.post)
            let r = try await rps.tokenAuthenticate(body: body)
            return json(r.status, r.body)
        case ("logout", 1):
            try allow(.post)
            try await rps.logout(body: body)
            return Response(status: .ok, headers: Self.cors(), body: .init())
        case ("mpinActivate", 1):
            guard method == .get || method == .post else { throw ServerError(405, "Method not allowed") }
            try await rps.activateLink(query: query)
            return json(200, StatusResponse(message: "Identity activated"))
        case ("user", 2):
            try allow(.post)
            try await rps.activate(mpinIDHex: parts[1], body: body)
            return json(200, StatusResponse(message: "OK"))
        case (p, 2), (p, 3):
            return try await routeRPS(rps, method: method, parts: Array(parts.dropFirst()), query: query, body: body)
        default: break
        }
        throw ServerError(404, "URI NOT FOUND")
    }

    /// A D-TA's endpoints (Appendix A), alone at the root or embedded under `/dta/`.
    private func routeDTA(_ dta: DTAHandlers, endpoint: String, query: String?) throws(ServerError) -> Response {
        switch endpoint {
        case "clientSecret": return json(200, try dta.clientSecret(query: query))
        case "timePermit": return json(200, try dta.timePermit(query: query))
        case "serverSecret": return json(200, try dta.serverSecret(query: query))
        case "status": return json(200, StatusResponse(message: "OK"))
        default: throw ServerError(404, "URI NOT FOUND")
        }
    }

    private func routeRPS(_ rps: RPS, method: HTTPRequest.Method, parts: [String], query: String?, body: [UInt8]) async throws(ServerError) -> Response {
        func allow(_ m: HTTPRequest.Method) throws(ServerError) {
            guard method == m else { throw ServerError(405, "Method not allowed") }
        }
        let arg = parts.count > 1 ? parts[1] : nil
        switch (parts[0], arg) {
        case ("clientSettings", nil):
            try allow(.get)
            return json(200, try rps.clientSettings())
        case ("user", _):
            try allow(.put)
            return json(200, try await rps.register(body: body, mpinIDSuffix: arg))
        case ("signature", let id?):
            try allow(.get)
            let regOTT = query.flatMap(FormEncoding.decode)?.last(where: { $0.0 == "regOTT" })?.1
            return json(200, try await rps.signature(mpinIDHex: id, regOTT: regOTT))
        case ("timePermit", let id?):
            try allow(.get)
            var r = json(200, try await rps.timePermit(mpinIDHex: id))
            r.headers[.cacheControl] = "no-cache"
            return r
        case ("setupDone", _?):
            try allow(.post)
            return json(200, StatusResponse(message: "OK"))
        case ("pass1", nil):
            try allow(.post)
            return json(200, try await rps.pass1(body: body))
        case ("pass2", nil):
            try allow(.post)
            return json(200, try await rps.pass2(body: body))
        case ("authenticate", nil):
            try allow(.post)
            return json(200, try await rps.mobileAuthenticate(body: body))
        case ("getAccessNumber", nil):
            try allow(.post)
            return json(200, try await rps.getAccessNumber())
        case ("accessnumber", nil):
            try allow(.post)
            return json(200, try await rps.pollAccessNumber(body: body))
        default:
            throw ServerError(404, "URI NOT FOUND")
        }
    }

    private func failure(_ error: any Error) -> Response {
        let e = (error as? ServerError) ?? ServerError(500, "Internal error")
        var r = json(e.status, ErrorResponse(message: e.message))
        if e.status == 401 { r.headers[.wwwAuthenticate] = "Authenticate" }
        return r
    }

    /// One encoder for every response (its configuration is only read while encoding).
    private static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = .withoutEscapingSlashes
        return e
    }()

    private func json(_ status: Int, _ value: some Encodable) -> Response {
        let data = (try? Self.encoder.encode(value)) ?? Data("{}".utf8)
        var headers = Self.cors()
        headers[.contentType] = "application/json; charset=UTF-8"
        return Response(status: .init(code: status), headers: headers,
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    private static func cors() -> HTTPFields {
        var h = HTTPFields()
        h[.accessControlAllowOrigin] = "*"
        h[.accessControlAllowCredentials] = "true"
        h[.accessControlAllowMethods] = "GET,PUT,POST,DELETE,OPTIONS"
        h[.accessControlAllowHeaders] = "Content-Type, Depth, User-Agent, X-File-Size, X-Requested-With, "
            + "X-Requested-By, If-Modified-Since, X-File-Name, Cache-Control, WWW-Authenticate"
        return h
    }
}

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
    let dispatcher: Dispatcher
    let storage: Storage?
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
            dispatcher = Dispatcher(rps: nil, embeddedDTA: nil, standaloneDTA: DTAHandlers(dta: try dta(index)),
                                    maxBodyBytes: config.maxBodyBytes)
            storage = nil
        case .all, .rps:
            // Transactions run on the request's thread: a lock held elsewhere (the `user`
            // command) may stall it at most this long before the request fails with 503.
            let storage = try dir.openStorage(busyTimeout: 2)
            let d1: any DTAEndpoint, d2: any DTAEndpoint, embedded: DTAHandlers?, certivox: String
            if case .rps(let u1, let u2) = role {
                d1 = RemoteDTA(base: u1); d2 = RemoteDTA(base: u2); embedded = nil
                certivox = u2.hasSuffix("/") ? u2 : u2 + "/"
            } else {
                let second = try dta(2)
                d1 = LocalDTA(dta: try dta(1)); d2 = LocalDTA(dta: second); embedded = DTAHandlers(dta: second)
                certivox = "/dta/"
            }
            let rps = try await RPS(config: config, appKey: key, dta1: d1, dta2: d2, certivoxURL: certivox,
                                    storage: storage, spool: MailSpool(path: dir.spoolPath, logger: logger), logger: logger)
            dispatcher = Dispatcher(rps: rps, embeddedDTA: embedded, standaloneDTA: nil, maxBodyBytes: config.maxBodyBytes)
            self.storage = storage
        }
        self.host = host; self.port = port; self.logger = logger
    }

    private func application(onRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        Application(
            responder: dispatcher,
            configuration: .init(address: .hostname(host, port: port), serverName: "mpin-server"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, then stops gracefully. Logs one line when ready.
    public func serve() async throws {
        let logger = logger, host = host
        let purge = startPurging()
        defer { purge.cancel() }
        try await application { port in
            logger.info("mpin-server ready", metadata: ["url": "http://\(host):\(port)"])
        }.runService()
    }

    /// Starts serving in the background (for tests and embedding); stop with `stop()`.
    public func start() async throws -> RunningServer {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = application { port in continuation.yield(port); continuation.finish() }
        let task = Task { try await app.run() }
        let purge = startPurging()
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next(), port != 0 else {
            task.cancel(); purge.cancel()
            _ = try? await task.value
            throw SetupError.io("server did not start")
        }
        return RunningServer(port: port, task: task, purge: purge)
    }

    private func startPurging() -> Task<Void, Never> {
        guard let storage else { return Task {} }
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 60_000_000_000)
                try? await storage.purgeExpired(now: Date())
            }
        }
    }
}

/// A server started with `MPinServer.start()`.
public final class RunningServer: Sendable {
    /// The bound port.
    public let port: Int
    private let task: Task<Void, any Error>
    private let purge: Task<Void, Never>

    init(port: Int, task: Task<Void, any Error>, purge: Task<Void, Never>) {
        self.port = port; self.task = task; self.purge = purge
    }

    /// Stops the server and waits until it has closed its socket.
    public func stop() async {
        purge.cancel()
        task.cancel()
        _ = try? await task.value
    }
}
