import HummingbirdCore
import Logging
package import NIOCore
import NIOHTTP1
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What one connection may cost (docs/SECURITY.md §5, "Hold connections open"): how long a client
/// may take to send a request's head, its body, and how long a kept-alive connection may sit idle;
/// how many connections are open at once.
package struct ConnectionLimits: Sendable, Equatable {
    /// Connections open at once; beyond it the connection that has waited longest for its
    /// client (idle, or still sending its request) is closed to make room.
    package var maxConnections: Int
    /// From the connection's first byte (or its opening) to the end of the request's head.
    package var headerTimeout: TimeAmount
    /// From the end of the head to the end of the body.
    package var bodyTimeout: TimeAmount
    /// A kept-alive connection with no request.
    package var idleTimeout: TimeAmount

    static let defaultMaxConnections = 4_096
    static let defaultHeaderTimeoutSeconds = 10.0
    static let defaultBodyTimeoutSeconds = 10.0
    static let defaultIdleTimeoutSeconds = 30.0

    package init(maxConnections: Int = 4_096,
                headerTimeout: TimeAmount = .seconds(10), bodyTimeout: TimeAmount = .seconds(10),
                idleTimeout: TimeAmount = .seconds(30)) {
        self.maxConnections = maxConnections
        self.headerTimeout = headerTimeout; self.bodyTimeout = bodyTimeout; self.idleTimeout = idleTimeout
    }

    /// The limits config.json sets, the connection cap kept below the process's descriptor limit
    /// (`descriptorLimit`, the soft RLIMIT_NOFILE) by a reserve for the database, the listening
    /// socket, the spool and the key files: an eighth of the limit, at least 64.
    init(config: ServerConfig, descriptorLimit: Int = ConnectionLimits.descriptorLimit()) {
        func time(_ seconds: Double?, _ fallback: Double) -> TimeAmount { .nanoseconds(Int64((seconds ?? fallback) * 1e9)) }
        let reserve = max(64, descriptorLimit / 8)
        self.init(maxConnections: max(1, min(config.maxConnections ?? Self.defaultMaxConnections, descriptorLimit - reserve)),
                  headerTimeout: time(config.headerTimeoutSeconds, Self.defaultHeaderTimeoutSeconds),
                  bodyTimeout: time(config.bodyTimeoutSeconds, Self.defaultBodyTimeoutSeconds),
                  idleTimeout: time(config.idleTimeoutSeconds, Self.defaultIdleTimeoutSeconds))
    }

    /// The soft limit on open descriptors (RLIMIT_NOFILE); 1,024 when it cannot be read.
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        return limit.rlim_cur >= rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// Raises the soft descriptor limit to the hard one (systemd's default soft limit is 1,024,
    /// its hard one far higher); returns the soft limit in force afterwards.
    @discardableResult
    package static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        return descriptorLimit()
    }
}

/// Why the server closed a connection of its own accord.
enum ConnectionClosure: String, CaseIterable, Sendable {
    /// Closed to make room for a new connection at the cap.
    case evicted
    /// A new connection refused: at the cap, every open connection was busy with a request.
    case refused
    case headerTimeout = "header_timeout"
    case bodyTimeout = "body_timeout"
    case idleTimeout = "idle_timeout"
}

/// Every open connection of one server, and whether it is waiting for its client (idle, or
/// reading a request) or busy (a request being answered). At the cap, the connection that has
/// waited longest is closed for the new one, so that a client that opens connections and sends
/// nothing (or a byte now and then) cannot keep others out: a login's connection sends its
/// request at once and is busy, never the longest waiting. Only when every connection is busy
/// is the new one refused.
final class ConnectionTable: Sendable {
    let limits: ConnectionLimits
    let metrics: ServerMetrics?
    let logger: Logger

    private struct Entry {
        let channel: any Channel
        var waiting: Bool
        /// When the entry last changed state (a counter, not a clock): lower waited longer.
        var since: UInt64
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var clock: UInt64 = 0
        /// Per kind of closure: when it was last logged, and how many happened since.
        var lastLogged: [ConnectionClosure: NIODeadline] = [:]
        var unlogged: [ConnectionClosure: Int] = [:]
    }

    private let state = Mutex(State())

    init(limits: ConnectionLimits, metrics: ServerMetrics?, logger: Logger) {
        self.limits = limits; self.metrics = metrics; self.logger = logger
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// Registers a new connection; false when it must be refused. At the cap, closes the
    /// connection that has waited longest.
    func admit(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let (admitted, victim, open): (Bool, (any Channel)?, Int) = state.withLock { s in
            var victim: (any Channel)? = nil
            if s.entries.count >= limits.maxConnections {
                var oldest: (key: ObjectIdentifier, since: UInt64)? = nil
                for (key, entry) in s.entries where entry.waiting && entry.since < (oldest?.since ?? .max) {
                    oldest = (key, entry.since)
                }
                guard let oldest else { return (false, nil, s.entries.count) }
                victim = s.entries.removeValue(forKey: oldest.key)?.channel
            }
            s.clock += 1
            s.entries[id] = Entry(channel: channel, waiting: true, since: s.clock)
            return (true, victim, s.entries.count)
        }
        metrics?.recordOpenConnections(open)
        if let victim {
            victim.close(promise: nil)
            record(.evicted)
        } else if !admitted {
            record(.refused)
        }
        return admitted
    }

    /// The connection now waits for its client (true) or answers a request (false).
    func setWaiting(_ channel: any Channel, _ waiting: Bool) {
        let id = ObjectIdentifier(channel)
        state.withLock { s in
            guard s.entries[id] != nil else { return }
            s.clock += 1
            s.entries[id]!.waiting = waiting
            s.entries[id]!.since = s.clock
        }
    }

    func remove(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let open = state.withLock { s in
            s.entries.removeValue(forKey: id)
            return s.entries.count
        }
        metrics?.recordOpenConnections(open)
    }

    /// Counts a closure and logs it, at most one line per kind every ten seconds (with how many
    /// there were): a flood of connections makes a few lines, not one per connection. Idle
    /// timeouts are ordinary and logged at debug level.
    func record(_ closure: ConnectionClosure) {
        metrics?.recordConnectionClosure(closure)
        let now = NIODeadline.now()
        let due: Int? = state.withLock { s in
            s.unlogged[closure, default: 0] += 1
            if let last = s.lastLogged[closure], now - last < .seconds(10) { return nil }
            s.lastLogged[closure] = now
            defer { s.unlogged[closure] = 0 }
            return s.unlogged[closure]
        }
        guard let due else { return }
        let message: Logger.Message
        switch closure {
        case .evicted: message = "connection limit reached: closed the connection that waited longest for its client"
        case .refused: message = "connection limit reached with every connection busy: refused a new connection"
        case .headerTimeout: message = "closed a connection that did not send a request head in time"
        case .bodyTimeout: message = "closed a connection that did not send its request body in time"
        case .idleTimeout: message = "closed an idle connection"
        }
        logger.log(level: closure == .idleTimeout ? .debug : .warning, message, metadata: [
            "connections": "\(count)", "limit": "\(limits.maxConnections)", "times": "\(due)",
        ])
    }
}

/// Sees every byte a connection receives, before TLS and HTTP decoding: the first byte of a
/// request on an idle connection starts its head's deadline.
final class ConnectionActivityHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    weak var phases: ConnectionPhaseHandler?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        phases?.bytesArrived()
        context.fireChannelRead(data)
    }
}

/// Follows a connection's requests between the HTTP/1 decoder and Hummingbird: enforces the
/// head, body and idle deadlines, tells the table whether the connection waits for its client,
/// closes the connection after the answer to a request that does not keep it alive (HTTP/1.0
/// without `Connection: keep-alive`, or `Connection: close`), and answers `Expect: 100-continue`
/// with 100 Continue.
final class ConnectionPhaseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum Phase { case idle, head, body, busy }

    private let table: ConnectionTable
    private var phase = Phase.head
    private var timer: Scheduled<Void>?
    /// Whether each request read and not yet answered keeps the connection alive, oldest first.
    private var keepAlive: [Bool] = []
    /// Whether a request's head has been read and its end not yet (its answer may already be
    /// written: a body refused as too large is answered before it has arrived).
    private var reading = false
    private var channel: (any Channel)?
    private var eventLoop: (any EventLoop)?

    init(table: ConnectionTable) { self.table = table }

    func handlerAdded(context: ChannelHandlerContext) {
        channel = context.channel
        eventLoop = context.eventLoop
        // A new connection must send its first head within the header timeout.
        enter(.head)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    /// The first byte after an answer starts the next head's deadline.
    func bytesArrived() {
        if phase == .idle { enter(.head) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAlive.append(head.isKeepAlive)
            reading = true
            enter(.body)
            if head.version == .http1_1, head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))),
                                      promise: nil)
            }
        case .body:
            break
        case .end:
            reading = false
            settle()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where keepAlive.first == false:
            // Says so to the client, as RFC 9112 §9.6 asks of the side that closes.
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .head, .body:
            context.write(data, promise: promise)
        case .end:
            let alive = keepAlive.isEmpty ? true : keepAlive.removeFirst()
            if !alive {
                let channel = context.channel
                let done = context.eventLoop.makePromise(of: Void.self)
                if let promise { done.futureResult.cascade(to: promise) }
                context.writeAndFlush(data, promise: done)
                done.futureResult.whenComplete { _ in channel.close(promise: nil) }
                return
            }
            context.write(data, promise: promise)
            // A body still arriving keeps its deadline; after it, `settle` on its end.
            if !reading { settle() }
        }
    }

    /// Busy while a request read is not answered yet (one pipelined behind another too), else idle.
    private func settle() {
        let next: Phase = keepAlive.isEmpty ? .idle : .busy
        if next != phase { enter(next) }
    }

    private func enter(_ next: Phase) {
        phase = next
        timer?.cancel()
        timer = nil
        guard let channel, let eventLoop else { return }
        table.setWaiting(channel, next != .busy)
        let limits = table.limits
        let (delay, closure): (TimeAmount, ConnectionClosure)
        switch next {
        case .busy: return
        case .idle: (delay, closure) = (limits.idleTimeout, .idleTimeout)
        case .head: (delay, closure) = (limits.headerTimeout, .headerTimeout)
        case .body: (delay, closure) = (limits.bodyTimeout, .bodyTimeout)
        }
        let table = table
        timer = eventLoop.scheduleTask(in: delay) {
            table.record(closure)
            channel.close(promise: nil)
        }
    }
}

/// A Hummingbird HTTP/1 child channel under the connection table: each new connection is
/// admitted (or refused) at the cap, and its requests followed by a `ConnectionPhaseHandler`
/// placed after NIO's HTTP/1 decoder.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let table: ConnectionTable

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard table.admit(channel) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        let table = table
        channel.closeFuture.whenComplete { _ in table.remove(channel) }
        do {
            try channel.pipeline.syncOperations.addHandler(ConnectionActivityHandler(), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        // Runs on the channel's event loop (the set-up's future completes there).
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let phases = ConnectionPhaseHandler(table: table)
            try operations.addHandler(phases, position: .after(decoder))
            try operations.handler(type: ConnectionActivityHandler.self).phases = phases
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension GuardedChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    var responder: HTTPChannelHandler.Responder { base.responder }
}
