import Foundation
import Hummingbird
import Logging
@testable import MPinServer
import NIOCore
import NIOEmbedded

/// The server the harness sends its requests to: a real data directory (fresh keys, the two
/// D-TA shares, a SQLite database) in a temporary directory, loaded by `MPinServer` as
/// `mpin-server serve` loads it, and the router that server would serve, called in process
/// (no socket). Made once per process; the data directory is removed at exit.
final class InProcessServer: Sendable {
    let responder: RouterResponder<ServerRequestContext>
    let logger: Logger
    /// The client ID of the OpenID app registered at start (`$CLIENT_ID` in inputs).
    let clientID: String
    let dataDirectory: String
    /// The channel every request's context names: an `EmbeddedChannel`, which has no peer
    /// address, so the client address is "unknown". One for the process (a channel left open
    /// per request would be reported as a leak: its pipeline and it refer to each other),
    /// made and read on libFuzzer's thread only (NIO's embedded loop is not thread-safe), so
    /// contexts are made there (`context()`) before the request goes to the concurrency pool.
    let channel: EmbeddedChannel

    /// `mobileWaitSeconds` is 0 so that the mobile's access-number poll answers at once
    /// (it would wait 10 s for the browser), and the access-number rate limit is out of the
    /// way (every request comes from one address; its 429 is tested by the server tests).
    init(logs: LogCapture, channel: EmbeddedChannel) async throws {
        // On tmpfs where there is one: registrations write to SQLite, and a disk's syncs would
        // slow every such input down to the disk's pace.
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
        Self.removeStaleDataDirectories(in: base)
        dataDirectory = base + "mpin-fuzz-server-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        _ = try DataDirectory.initialise(path: dataDirectory, autoActivate: true) { config in
            config.mobileWaitSeconds = 0
            config.accessNumberRequestsPerMinute = 1_000_000
            // No socket here, so no listening address: the OpenID issuer comes from this alone.
            config.publicBaseURL = "http://127.0.0.1:8005"
        }
        var logger = Logger(label: "mpin-fuzz-server") { _ in CapturingLogHandler(capture: logs) }
        logger.logLevel = .trace
        self.logger = logger
        let server = try await MPinServer(dataDirectory: dataDirectory, logger: logger)
        guard let database = server.database else { throw SetupError.io("no database") }
        clientID = try await AppAdmin(database: database)
            .add(name: "fuzz", redirectURI: "https://127.0.0.1/callback").clientId
        self.channel = channel
        responder = server.routes.router(logger: logger, metrics: server.metrics, storage: server.storage).buildResponder()
    }

    /// A request context as the server makes one per request; on the thread that made `channel`.
    func context() -> ServerRequestContext {
        ServerRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
    }

    /// The response to `request` with its body collected.
    func respond(_ request: Request, context: ServerRequestContext) async throws -> (Response, [UInt8]) {
        let response = try await responder.respond(to: request, context: context)
        let collector = BodyCollector()
        var head = response
        head.body = ResponseBody()
        try await response.body.write(collector)
        return (head, collector.bytes)
    }

    /// Removes the data directories of harness processes that are gone: a run that ends in a
    /// finding (libFuzzer's crash exit) or is killed runs no exit handler, and its directory
    /// holds keys (mode 0700, but nothing should keep them).
    static func removeStaleDataDirectories(in base: String) {
        let prefix = "mpin-fuzz-server-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: base + name) }
        }
    }

    func removeDataDirectory() {
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}

/// A response body writer that keeps what is written.
final class BodyCollector: ResponseBodyWriter, @unchecked Sendable {
    private(set) var bytes: [UInt8] = []

    func write(_ buffer: ByteBuffer) async throws { bytes += buffer.readableBytesView }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// Every log line the server writes, as text, kept until the harness has checked it.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }

    /// The lines written since the last call.
    func take() -> [String] { lock.withLock { defer { lines.removeAll(keepingCapacity: true) }; return lines } }
}

/// A log handler that writes into a `LogCapture`. The `route` metadata is left out: it is the
/// router's pattern, not request text, and routes have names as long as a short secret.
struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        var fields = all.filter { $0.key != "route" }.map { "\($0.key)=\($0.value)" }.sorted()
        if let error = event.error { fields.append("error=\(error)") }
        capture.append(([event.message.description] + fields).joined(separator: " "))
    }
}
