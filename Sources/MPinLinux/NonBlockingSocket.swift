// The socket side of PlainHTTPTransport: IP-literal addresses, a non-blocking TCP connect and
// waiting for readiness against one deadline. HTTP itself lives in PlainHTTPTransport.swift.

import MPinClient
#if canImport(Glibc)
import Glibc
#endif

/// Non-blocking TCP sockets bounded by a deadline on the monotonic clock (milliseconds, see
/// `monotonicMilliseconds()`), so that connect, send and receive together keep to one limit.
enum NonBlockingSocket {
    /// Opens a non-blocking, close-on-exec TCP socket connected to `address`, waiting at most
    /// until `deadline`. `limit` (milliseconds) and `host` only word the errors.
    static func connect(to address: SocketAddress, deadline: Int, limit: Int,
                        host: String) throws(HTTPTransportError) -> Int32 {
        let socket = Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                                      | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_TCP))
        guard socket >= 0 else {
            throw .connectionFailed(host: host, detail: "no socket: \(errnoText(errno))")
        }
        var on: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var failure: Int32 = address.withSockaddr { Glibc.connect(socket, $0, $1) } == 0 ? 0 : errno
        // An interrupted non-blocking connect goes on in the background, like one in progress:
        // calling connect again would fail with EALREADY, so both wait for writability.
        if failure == EINPROGRESS || failure == EINTR {
            switch wait(socket, for: Int16(POLLOUT), until: deadline) {
            case .ready:
                var length = socklen_t(MemoryLayout<Int32>.size)
                failure = 0
                if getsockopt(socket, SOL_SOCKET, SO_ERROR, &failure, &length) != 0 { failure = errno }
            case .timedOut:
                close(socket)
                throw .timedOut(host: host, seconds: Double(limit) / 1000)
            case .failed(let code):
                failure = code
            }
        }
        guard failure == 0 else {
            close(socket)
            if failure == ECONNREFUSED { throw .connectionRefused(host: host) }
            throw .connectionFailed(host: host, detail: errnoText(failure))
        }
        return socket
    }

    enum WaitResult {
        case ready
        case timedOut
        case failed(Int32)
    }

    /// Waits until `socket` is ready for `events` or the deadline passes. A signal does not end
    /// the wait early: the retry recomputes the time left.
    static func wait(_ socket: Int32, for events: Int16, until deadline: Int) -> WaitResult {
        var entry = pollfd(fd: socket, events: events, revents: 0)
        do {
            let ready = try retryingOnInterrupt { () -> Int32 in
                let remaining = deadline - monotonicMilliseconds()
                guard remaining > 0 else { return 0 }
                return poll(&entry, 1, Int32(min(remaining, Int(Int32.max))))
            }
            return ready > 0 ? .ready : .timedOut  // errors and hang-ups surface in the next send/recv
        } catch {
            return .failed(error.code)
        }
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
