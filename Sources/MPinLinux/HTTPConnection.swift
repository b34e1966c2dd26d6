// One connection of PlainHTTPTransport: a non-blocking TCP socket, with or without TLS over it
// (OpenSSL's libssl through CTLSShim, loaded at the first https request). The HTTP exchange
// reads and writes through it the same way in both cases; waiting is the caller's (poll
// against its deadline).

import CTLSShim
import MPinClient
#if canImport(Glibc)
import Glibc
#endif

/// A connected socket, and the TLS session on it for https. Used by one request at a time: a
/// transport hands it from the request to its idle slot and back (`IdleConnection`), hence
/// `@unchecked Sendable`.
final class HTTPConnection: @unchecked Sendable {
    let socket: Int32
    private var tls: OpaquePointer?

    /// What one read or write did.
    enum Transfer {
        /// This many bytes went or came.
        case count(Int)
        /// Nothing yet: poll for these events (POLLIN or POLLOUT), then call again.
        case wait(Int16)
        /// The peer closed the connection; `clean` unless a TLS peer did so without close_notify.
        case end(clean: Bool)
        /// An error: the errno value (0 for a TLS protocol error) and what to say.
        case failed(code: Int32, detail: String)
    }

    /// A plain TCP connection on `socket`.
    init(socket: Int32) {
        self.socket = socket
    }

    /// Starts TLS on this connection to `host` (an IP literal or a DNS name) and completes the
    /// handshake before `deadline` (monotonic milliseconds): the certificate chain verified
    /// against `caFile`/`caDirectory`, or the system's CAs when both are nil, and the host
    /// checked against the certificate. On failure the connection is closed.
    func startTLS(host: String, caFile: String?, caDirectory: String?, deadline: Int, limit: Int,
                  display: String) throws(HTTPTransportError) {
        var message = [CChar](repeating: 0, count: 512)
        let opened = message.withUnsafeMutableBufferPointer { buffer in
            mpin_tls_open(socket, host, caFile, caDirectory, buffer.baseAddress, buffer.count)
        }
        guard let opened else {
            close()
            throw .tlsFailure(host: display, detail: Self.text(message))
        }
        tls = opened
        while true {
            let code = message.withUnsafeMutableBufferPointer { mpin_tls_handshake(opened, $0.baseAddress, $0.count) }
            let events: Int16
            switch code {
            case 0: return
            case Int32(MPIN_TLS_WANT_READ): events = Int16(POLLIN)
            case Int32(MPIN_TLS_WANT_WRITE): events = Int16(POLLOUT)
            default:
                close()
                throw .tlsFailure(host: display, detail: Self.text(message))
            }
            switch NonBlockingSocket.wait(socket, for: events, until: deadline) {
            case .ready: continue
            case .timedOut:
                close()
                throw .timedOut(host: display, seconds: Double(limit) / 1000)
            case .failed(let failure):
                close()
                throw .connectionFailed(host: display, detail: errnoText(failure))
            }
        }
    }

    /// Writes from `bytes` (see `Transfer`).
    func write(_ bytes: UnsafeRawBufferPointer) -> Transfer {
        if let tls { return Self.tlsTransfer { mpin_tls_write(tls, bytes.baseAddress, bytes.count, $0, $1) } }
        return Self.socketTransfer(waitingFor: Int16(POLLOUT)) { () throws(SystemCallError) -> Int in
            try retryingOnInterrupt { Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Reads into `bytes` (see `Transfer`).
    func read(_ bytes: UnsafeMutableRawBufferPointer) -> Transfer {
        if let tls { return Self.tlsTransfer { mpin_tls_read(tls, bytes.baseAddress, bytes.count, $0, $1) } }
        return Self.socketTransfer(waitingFor: Int16(POLLIN)) { () throws(SystemCallError) -> Int in
            try retryingOnInterrupt { Glibc.recv(socket, bytes.baseAddress, bytes.count, 0) }
        }
    }

    /// Whether a parked connection can carry another request: nothing has arrived while it
    /// was idle but, for TLS, records with no data (session tickets), and the peer has not
    /// closed it.
    var isUsableAfterIdle: Bool {
        if let tls { return mpin_tls_idle_usable(tls) != 0 }
        var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 0
    }

    /// Ends the TLS session (close_notify when `notify`) and closes the socket.
    func close(notify: Bool = false) {
        if let tls { mpin_tls_free(tls, notify ? 1 : 0) }
        tls = nil
        Glibc.close(socket)
    }

    /// A send(2) or recv(2) on the plain socket: 0 bytes is the peer's end (recv only), EAGAIN
    /// a wait for `events`.
    private static func socketTransfer(waitingFor events: Int16, _ call: () throws(SystemCallError) -> Int) -> Transfer {
        do {
            let count = try call()
            return count == 0 ? .end(clean: true) : .count(count)
        } catch where error.code == EAGAIN || error.code == EWOULDBLOCK {
            return .wait(events)
        } catch {
            return .failed(code: error.code, detail: errnoText(error.code))
        }
    }

    /// A libssl read or write, given a buffer for OpenSSL's reason.
    private static func tlsTransfer(_ call: (UnsafeMutablePointer<CChar>?, Int) -> Int) -> Transfer {
        var message = [CChar](repeating: 0, count: 512)
        let result = message.withUnsafeMutableBufferPointer { call($0.baseAddress, $0.count) }
        return transfer(result, errno: errno, message)
    }

    private static func transfer(_ result: Int, errno code: Int32, _ message: [CChar]) -> Transfer {
        switch result {
        case 1...: return .count(result)
        case Int(MPIN_TLS_WANT_READ): return .wait(Int16(POLLIN))
        case Int(MPIN_TLS_WANT_WRITE): return .wait(Int16(POLLOUT))
        case Int(MPIN_TLS_CLOSED): return .end(clean: true)
        case Int(MPIN_TLS_EOF): return .end(clean: false)
        default: return .failed(code: code, detail: text(message))
        }
    }

    private static func text(_ message: [CChar]) -> String {
        let bytes = message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? "TLS error" : String(decoding: bytes, as: UTF8.self)
    }
}
