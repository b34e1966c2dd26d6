// HTTP/1.1 of our own, over a TCP socket or TLS on one, for the requests that need nothing
// libcurl offers: an `http` or `https` URL whose host is an IP address, with no proxy
// configured. Loading libcurl and the thirty-odd libraries it pulls in costs every PAM login
// about 10 ms; plain HTTP costs nothing to load, TLS loads only OpenSSL's libssl and libcrypto
// (HTTPConnection.swift, CTLSShim); neither starts a thread or resolves a name (the system
// resolver has no timeout).
//
// This file is the HTTP side: which URLs it takes, the request message, one request/response
// exchange on a connection and keep-alive. The socket side (connect, waiting against the
// deadline, addresses) is NonBlockingSocket.swift; reading and writing, with or without TLS,
// HTTPConnection.swift; the kept connection IdleConnection.swift.

import MPinClient
#if canImport(Glibc)
import Glibc
#endif

/// An `HTTPTransport` for `http` and `https` URLs with an IP-address host, over POSIX sockets
/// (and OpenSSL for https).
///
/// * Non-blocking sockets and `poll` against one deadline: connect, send and receive together
///   never take longer than the request's timeout; connect and the TLS handshake together
///   never longer than the connect timeout.
/// * TLS as `CurlHTTPTransport` does it: version 1.2 or later, the certificate chain verified
///   against `caFile`/`caDirectory` (instead of the system's CAs, when either is set) and the
///   address checked against the certificate's subject alternative names; no way to turn
///   verification off.
/// * Keep-alive: consecutive requests reuse one connection; a forked child never uses its
///   parent's.
/// * Responses larger than `maxResponseBytes` are refused mid-transfer; redirects are returned,
///   not followed.
/// * Host names, user info in the URL and proxies are out of scope: `send` refuses them, and
///   `LinuxHTTPTransport` hands them to `CurlHTTPTransport` instead.
package struct PlainHTTPTransport: HTTPTransport {
    /// The configuration every request uses (the CA settings for https).
    package let configuration: LinuxHTTPConfiguration
    private let idle: IdleConnection?

    /// Creates a transport.
    package init(configuration: LinuxHTTPConfiguration = LinuxHTTPConfiguration()) {
        self.configuration = configuration
        idle = configuration.reusesConnection ? IdleConnection() : nil
    }

    /// Where a URL this transport can send goes: the parsed URL and the socket address.
    struct Destination {
        let origin: URLOrigin
        let address: SocketAddress
    }

    /// The destination of `url` if this transport sends it by itself: http or https, an IP
    /// address, no user info, ASCII only, and no proxy variable set (read as libcurl reads
    /// them: `http_proxy` for `http`, `https_proxy` or `HTTPS_PROXY` for `https`, then
    /// `all_proxy`, `ALL_PROXY`).
    static func destination(of url: String) -> Destination? {
        guard case .success(let origin) = URLOrigin.parse(url), origin.scheme == "http" || origin.scheme == "https",
              !origin.hasUserInfo, url.utf8.allSatisfy({ $0 < 0x80 }),
              let address = SocketAddress(ipLiteral: origin.host, port: origin.port ?? (origin.scheme == "https" ? 443 : 80)) else {
            return nil
        }
        let proxies = origin.scheme == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]
        for name in proxies + ["all_proxy", "ALL_PROXY"] {
            if let value = getenv(name), value.pointee != 0 { return nil }
        }
        return Destination(origin: origin, address: address)
    }

    /// Whether `url` is one this transport sends by itself (see the type's description).
    package static func canSend(to url: String) -> Bool { destination(of: url) != nil }

    /// Performs `request`, blocking until the response is complete or the timeout expires.
    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        if let destination = Self.destination(of: request.url) { return try send(request, to: destination) }
        if case .failure(let error) = URLOrigin.parse(request.url) { throw .invalidURL(reason: error.reason) }
        throw .invalidURL(reason: "this transport sends only ASCII http and https URLs with an IP address, no user info "
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
                reused.close()  // the server had closed it while idle; try once on a new one
            }
        }
        // The connect limit counts from now: a stale kept connection must not have used it up.
        // It bounds the TCP connect and the TLS handshake together.
        let connectDeadline = min(deadline, monotonicMilliseconds() + connectLimit)
        let connection = HTTPConnection(socket: try NonBlockingSocket.connect(to: address, deadline: connectDeadline,
                                                                              limit: connectLimit, host: origin.display))
        if origin.scheme == "https" {
            try connection.startTLS(host: origin.host, caFile: configuration.caFile, caDirectory: configuration.caDirectory,
                                    deadline: connectDeadline, limit: connectLimit, display: origin.display)
        }
        switch try exchange(connection, message: message, method: request.method, deadline: deadline,
                            totalLimit: total, origin: origin, reused: false) {
        case .response(let response, let keep):
            park(connection, keep: keep, origin: origin)
            return response
        case .stale:  // only a reused connection is ever stale; kept so that the switch is total
            connection.close()
            throw .connectionFailed(host: origin.display, detail: "the server closed the connection without replying")
        }
    }

    private func park(_ connection: HTTPConnection, keep: Bool, origin: URLOrigin) {
        if keep, let idle { idle.put(connection, origin: origin.display) } else { connection.close(notify: true) }
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

    // MARK: - The exchange

    private enum Outcome {
        case response(HTTPResponse, keepConnection: Bool)
        /// A reused connection the server had closed: the request can be sent again on a new
        /// one. That is so when sending failed (the server cannot have a whole request), or when
        /// nothing came back to an idempotent request. A POST that was sent whole and got no
        /// reply is not repeated (RFC 9110 section 9.2.2): the server may have processed it,
        /// and a pass 2 sent twice would count a wrong PIN twice.
        case stale
    }

    private func exchange(_ connection: HTTPConnection, message: [UInt8], method: HTTPMethod, deadline: Int,
                          totalLimit: Int, origin: URLOrigin, reused: Bool) throws(HTTPTransportError) -> Outcome {
        let host = origin.display
        func fail(_ error: HTTPTransportError) -> HTTPTransportError {
            connection.close()
            return error
        }
        /// Waits for `events` before the deadline; nil when ready.
        func wait(_ events: Int16) -> HTTPTransportError? {
            switch NonBlockingSocket.wait(connection.socket, for: events, until: deadline) {
            case .ready: return nil
            case .timedOut: return fail(.timedOut(host: host, seconds: Double(totalLimit) / 1000))
            case .failed(let failure): return fail(.connectionFailed(host: host, detail: errnoText(failure)))
            }
        }
        var sent = 0
        while sent < message.count {
            switch message.withUnsafeBytes({ connection.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }) {
            case .count(let count):
                sent += count
            case .wait(let events):
                if let error = wait(events) { throw error }
            case .end:
                if reused { return .stale }
                throw fail(.connectionFailed(host: host, detail: "the server closed the connection"))
            case .failed(let code, let detail):
                if reused, sent == 0 || code == EPIPE || code == ECONNRESET { return .stale }
                throw fail(.connectionFailed(host: host, detail: detail))
            }
        }

        let resendable = reused && Self.isIdempotent(method)
        var reader = HTTPResponseReader(limit: configuration.maxResponseBytes)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        receiving: while true {
            let progress: HTTPResponseReader.Progress
            switch buffer.withUnsafeMutableBytes({ connection.read($0) }) {
            case .count(let count):
                progress = reader.receive(buffer[..<count])
            case .end(let clean):
                if resendable, reader.receivedNothing { return .stale }
                // Without close_notify a TLS response that ends with the connection may have
                // been cut short by someone in between: only a response complete by its own
                // framing is accepted, and that never gets here.
                guard clean || reader.receivedNothing else {
                    throw fail(.connectionFailed(host: host, detail: "the server closed the TLS connection without close_notify"))
                }
                progress = reader.receiveEnd()
            case .wait(let events):
                if let error = wait(events) { throw error }
                continue receiving
            case .failed(let code, let detail):
                if resendable, reader.receivedNothing, code == ECONNRESET { return .stale }
                throw fail(.connectionFailed(host: host, detail: detail))
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
}
