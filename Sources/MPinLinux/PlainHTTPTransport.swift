// HTTP/1.1 over a plain TCP socket, for the requests that need nothing libcurl offers: an `http`
// URL whose host is an IP address, with no proxy configured. Loading libcurl and the thirty-odd
// libraries it pulls in costs every PAM login about 10 ms; this costs nothing to load, starts
// no threads and never resolves a name (the system resolver has no timeout).

import MPinClient
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// An `HTTPTransport` for plain `http` URLs with an IP-address host, over POSIX sockets.
///
/// * Non-blocking sockets and `poll` against one deadline: connect, send and receive together
///   never take longer than the request's timeout.
/// * Keep-alive: consecutive requests reuse one connection; a forked child never uses its
///   parent's.
/// * Responses larger than `maxResponseBytes` are refused mid-transfer; redirects are returned,
///   not followed.
/// * `https` URLs, host names, user info in the URL and proxies are out of scope: `send` refuses
///   them, and `LinuxHTTPTransport` hands them to `CurlHTTPTransport` instead.
public struct PlainHTTPTransport: HTTPTransport {
    /// The configuration every request uses (the CA settings do not apply).
    public let configuration: LinuxHTTPConfiguration
    private let idle: IdleConnection?

    /// Creates a transport.
    public init(configuration: LinuxHTTPConfiguration = LinuxHTTPConfiguration()) {
        self.configuration = configuration
        idle = configuration.reusesConnection ? IdleConnection() : nil
    }

    /// Where a URL this transport can send goes: the parsed URL and the socket address.
    struct Destination {
        let origin: URLOrigin
        let address: SocketAddress
    }

    /// The destination of `url` if this transport sends it by itself: plain http, an IP
    /// address, no user info, ASCII only, and no proxy variable set (read as libcurl reads
    /// them for `http`: `http_proxy`, `all_proxy`, `ALL_PROXY`).
    static func destination(of url: String) -> Destination? {
        guard case .success(let origin) = URLOrigin.parse(url), origin.scheme == "http", !origin.hasUserInfo,
              url.utf8.allSatisfy({ $0 < 0x80 }),
              let address = SocketAddress(ipLiteral: origin.host, port: origin.port ?? 80) else {
            return nil
        }
        for name in ["http_proxy", "all_proxy", "ALL_PROXY"] {
            if let value = getenv(name), value.pointee != 0 { return nil }
        }
        return Destination(origin: origin, address: address)
    }

    /// Whether `url` is one this transport sends by itself (see the type's description).
    public static func canSend(to url: String) -> Bool { destination(of: url) != nil }

    /// Performs `request`, blocking until the response is complete or the timeout expires.
    public func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        if let destination = Self.destination(of: request.url) { return try send(request, to: destination) }
        if case .failure(let error) = URLOrigin.parse(request.url) { throw .invalidURL(reason: error.reason) }
        throw .invalidURL(reason: "this transport sends only ASCII http URLs with an IP address, no user info "
                          + "and no proxy set")
    }

    /// Performs `request` to a destination `destination(of:)` accepted (LinuxHTTPTransport
    /// routes with it, so the URL is parsed once).
    func send(_ request: HTTPRequest, to destination: Destination) throws(HTTPTransportError) -> HTTPResponse {
        let origin = destination.origin, address = destination.address
        let message = try Self.requestMessage(request, origin: origin, userAgent: configuration.userAgent)

        let total = HTTPRequestRules.milliseconds(request.timeout ?? configuration.timeout)
        let connectLimit = min(HTTPRequestRules.milliseconds(configuration.connectTimeout), total)
        let start = monotonicMilliseconds()
        let deadline = start + total

        if let reused = idle?.take(origin: origin.display) {
            switch try exchange(reused, message: message, method: request.method, deadline: deadline,
                                totalLimit: total, origin: origin, reused: true) {
            case .response(let response, let keep):
                park(reused, keep: keep, origin: origin)
                return response
            case .stale:
                close(reused)  // the server had closed it while idle; try once on a new one
            }
        }
        // The connect limit counts from now: a stale kept connection must not have used it up.
        let socket = try connect(address, deadline: min(deadline, monotonicMilliseconds() + connectLimit),
                                 limit: connectLimit, origin: origin)
        switch try exchange(socket, message: message, method: request.method, deadline: deadline,
                            totalLimit: total, origin: origin, reused: false) {
        case .response(let response, let keep):
            park(socket, keep: keep, origin: origin)
            return response
        case .stale:  // only a reused connection is ever stale; kept so that the switch is total
            close(socket)
            throw .connectionFailed(host: origin.display, detail: "the server closed the connection without replying")
        }
    }

    private func park(_ socket: Int32, keep: Bool, origin: URLOrigin) {
        if keep, let idle { idle.put(socket, origin: origin.display) } else { close(socket) }
    }

    // MARK: - The request

    /// The request line, headers and body as sent. Header names the transport manages (Host,
    /// Content-Length, Transfer-Encoding, Connection) are refused; a caller's User-Agent or
    /// Accept replaces the default.
    static func requestMessage(_ request: HTTPRequest, origin: URLOrigin,
                               userAgent: String) throws(HTTPTransportError) -> [UInt8] {
        let headers = try HTTPRequestRules.validatedHeaders(request)
        let names = Set(headers.map { $0.name.lowercased() })
        var head = "\(request.method.rawValue) \(origin.target) HTTP/1.1\r\nHost: \(origin.authority)\r\n"
        if !names.contains("user-agent") { head += "User-Agent: \(userAgent)\r\n" }
        if !names.contains("accept") { head += "Accept: */*\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if HTTPRequestRules.sendsBody(request) { head += "Content-Length: \(request.body?.count ?? 0)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (request.body ?? [])
    }

    // MARK: - The connection

    private func connect(_ address: SocketAddress, deadline: Int, limit: Int,
                         origin: URLOrigin) throws(HTTPTransportError) -> Int32 {
        let socket = Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                                      | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_TCP))
        guard socket >= 0 else {
            throw .connectionFailed(host: origin.display, detail: "no socket: \(errnoText(errno))")
        }
        var on: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var failure: Int32 = address.withSockaddr { Glibc.connect(socket, $0, $1) } == 0 ? 0 : errno
        if failure == EINPROGRESS || failure == EINTR {
            switch wait(socket, for: Int16(POLLOUT), until: deadline) {
            case .ready:
                var length = socklen_t(MemoryLayout<Int32>.size)
                failure = 0
                if getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) != 0 { failure = errno }
            case .timedOut:
                close(socket)
                throw .timedOut(host: origin.display, seconds: Double(limit) / 1000)
            case .failed(let code):
                failure = code
            }
        }
        guard failure == 0 else {
            close(socket)
            if failure == ECONNREFUSED { throw .connectionRefused(host: origin.display) }
            throw .connectionFailed(host: origin.display, detail: errnoText(failure))
        }
        return socket
    }

    private enum Outcome {
        case response(HTTPResponse, keepConnection: Bool)
        /// A reused connection the server had closed: the request can be sent again on a new
        /// one. That is so when sending failed (the server cannot have a whole request), or when
        /// nothing came back to an idempotent request. A POST that was sent whole and got no
        /// reply is not repeated (RFC 9110 section 9.2.2): the server may have processed it,
        /// and a pass 2 sent twice would count a wrong PIN twice.
        case stale
    }

    private func exchange(_ socket: Int32, message: [UInt8], method: HTTPMethod, deadline: Int, totalLimit: Int,
                          origin: URLOrigin, reused: Bool) throws(HTTPTransportError) -> Outcome {
        let host = origin.display
        func fail(_ error: HTTPTransportError) -> HTTPTransportError {
            close(socket)
            return error
        }
        var sent = 0
        while sent < message.count {
            let count = message.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count > 0 { sent += count; continue }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {
                switch wait(socket, for: Int16(POLLOUT), until: deadline) {
                case .ready: continue
                case .timedOut: throw fail(.timedOut(host: host, seconds: Double(totalLimit) / 1000))
                case .failed(let failure): throw fail(.connectionFailed(host: host, detail: errnoText(failure)))
                }
            }
            if reused, sent == 0 || code == EPIPE || code == ECONNRESET { return .stale }
            throw fail(.connectionFailed(host: host, detail: errnoText(code)))
        }

        let resendable = reused && Self.isIdempotent(method)
        var reader = HTTPResponseReader(limit: configuration.maxResponseBytes)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        receiving: while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            let code = errno
            var progress = HTTPResponseReader.Progress.needsMore
            if count > 0 {
                progress = reader.receive(buffer[..<count])
            } else if count == 0 {
                if resendable, reader.receivedNothing { return .stale }
                progress = reader.receiveEnd()
            } else if code == EAGAIN || code == EWOULDBLOCK {
                switch wait(socket, for: Int16(POLLIN), until: deadline) {
                case .ready: continue receiving
                case .timedOut: throw fail(.timedOut(host: host, seconds: Double(totalLimit) / 1000))
                case .failed(let failure): throw fail(.connectionFailed(host: host, detail: errnoText(failure)))
                }
            } else if code != EINTR {
                if resendable, reader.receivedNothing, code == ECONNRESET { return .stale }
                throw fail(.connectionFailed(host: host, detail: errnoText(code)))
            }
            switch progress {
            case .needsMore: continue receiving
            case .complete: break receiving
            case .failed(.tooLarge): throw fail(.responseTooLarge(limit: configuration.maxResponseBytes))
            case .failed(.malformed(let detail)): throw fail(.connectionFailed(host: host, detail: detail))
            }
        }
        let response = HTTPResponse(status: reader.status, headers: reader.headers, body: reader.body)
        return .response(response, keepConnection: reader.keepsConnection)
    }

    /// Methods RFC 9110 lets a client repeat on its own.
    private static func isIdempotent(_ method: HTTPMethod) -> Bool {
        switch method {
        case .get, .put, .delete, .options: true
        case .post, .patch: false
        }
    }

    private enum WaitResult {
        case ready
        case timedOut
        case failed(Int32)
    }

    /// Waits until `socket` is ready for `events` or the deadline passes.
    private func wait(_ socket: Int32, for events: Int16, until deadline: Int) -> WaitResult {
        while true {
            let remaining = deadline - monotonicMilliseconds()
            guard remaining > 0 else { return .timedOut }
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let result = poll(&entry, 1, Int32(min(remaining, Int(Int32.max))))
            if result > 0 { return .ready }  // errors and hang-ups surface in the next send/recv
            if result == 0 { return .timedOut }
            if errno != EINTR { return .failed(errno) }
        }
    }
}

/// A parked keep-alive socket, the origin it is connected to and the process that opened it.
final class IdleConnection: Sendable {
    private let slot = Mutex((socket: Int32(-1), origin: "", owner: getpid()))

    /// The parked socket if it is connected to `origin`, still open at the other end, and this
    /// process's own; nil otherwise (a socket that fails those checks is closed).
    func take(origin wanted: String) -> Int32? {
        let (candidate, inherited, matches): (Int32, Bool, Bool) = slot.withLock { s in
            defer { s = (-1, "", getpid()) }
            return (s.socket, s.owner != getpid(), s.origin == wanted)
        }
        // A forked child forgets the parent's connection without closing it: by now the child
        // may have closed that descriptor and reused its number for something of its own (the
        // copy is close-on-exec, so at worst it stays open until the child exits or execs).
        guard candidate >= 0, !inherited else { return nil }
        // Readable while idle means closed by the server (or stray bytes): drop it.
        var entry = pollfd(fd: candidate, events: Int16(POLLIN), revents: 0)
        guard matches, poll(&entry, 1, 0) == 0 else {
            close(candidate)
            return nil
        }
        return candidate
    }

    /// Parks `socket`; closes it if another one is already parked.
    func put(_ candidate: Int32, origin parked: String) {
        let stored: Bool = slot.withLock { s in
            guard s.socket < 0, s.owner == getpid() else { return false }
            s = (candidate, parked, s.owner)
            return true
        }
        if !stored { close(candidate) }
    }

    deinit {
        let (socket, owner) = slot.withLock { ($0.socket, $0.owner) }
        if socket >= 0, owner == getpid() { close(socket) }
    }
}

/// An IPv4 or IPv6 socket address parsed from an IP literal (no name resolution).
struct SocketAddress {
    private var storage = sockaddr_storage()
    private(set) var family: Int32 = 0
    private var length: socklen_t = 0

    init?(ipLiteral host: String, port: Int) {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            store(v4, family: AF_INET)
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            store(v6, family: AF_INET6)
        } else {
            return nil
        }
    }

    private mutating func store<Address>(_ address: Address, family: Int32) {
        withUnsafeBytes(of: address) { bytes in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
        }
        self.family = family
        length = socklen_t(MemoryLayout<Address>.size)
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self), length) }
    }
}

/// Milliseconds on the monotonic clock.
func monotonicMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

/// `strerror` text for an errno value (messages carry no request data).
func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}
