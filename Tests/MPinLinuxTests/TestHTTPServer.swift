// A tiny HTTP/1.1 server for the transport tests: POSIX sockets, 127.0.0.1 only, a port the
// kernel picks, one accepting thread (plus one per connection for the keep-alive behaviours),
// stopped (and joined) by the test.

import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MPinLinux

final class TestHTTPServer: @unchecked Sendable {
    /// How a `.huge` body is framed.
    enum BodyFraming {
        /// `Content-Length`.
        case length
        /// `Transfer-Encoding: chunked`, 64 KiB chunks.
        case chunked
        /// Neither: the body ends when the server closes.
        case untilClose
    }

    enum Behaviour {
        /// Replies with the raw request as the body; `/status/NNN` picks the status code.
        case echo
        /// Accepts connections and never answers.
        case silent
        /// Replies 200 with `bytes` bytes of body, framed as `framing` says.
        case huge(bytes: Int, framing: BodyFraming)
        /// Reads the request (unless `readFirst` is false), sends these bytes and closes.
        case raw([UInt8], readFirst: Bool = true)
        /// Reads the request, sends each piece on its own with a pause in between (so that the
        /// client receives a reply cut at these places), and closes.
        case rawInPieces([[UInt8]], pauseMicroseconds: UInt32)
        /// Reads the request, sends these bytes and keeps the connection open without a word
        /// more until the server stops (a reply that stalls half-way).
        case rawThenStall([UInt8])
        /// Answers every request on a connection with `head` (a status line and header lines,
        /// each ending in CRLF), `Content-Length` and the raw request as the body, and keeps the
        /// connection open whatever `head` says (a thread per connection).
        case persistent(head: String)
        /// Answers every request on a connection with these bytes and keeps the connection open
        /// (a thread per connection).
        case persistentRaw([UInt8])
        /// Answers the first request on each connection as `.persistent` does (keep-alive
        /// implied), then closes the connection: at once, or only after reading the next
        /// request without answering it (the server gave up on the idle connection just as the
        /// client reused it).
        case keepAliveThenClose(readsNextRequest: Bool)

        /// HTTP/1.1 keep-alive: every request on one connection.
        static let keepAliveEcho = Behaviour.persistent(head: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
    }

    let port: UInt16
    private let behaviour: Behaviour
    private let listenFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let connectionThreads = DispatchGroup()
    private let lock = NSLock()
    private var stopped = false
    /// Every open connection: shut down by stop(), closed once no thread uses it any more.
    private var held: Set<Int32> = []
    private var accepted = 0
    private var requests = 0
    private var hugeBytesSent = 0

    /// Body bytes a `.huge` server managed to send before the client hung up (read after stop()).
    var bodyBytesSent: Int {
        lock.lock()
        defer { lock.unlock() }
        return hugeBytesSent
    }

    /// How many connections the server has accepted.
    var acceptedConnections: Int {
        lock.lock()
        defer { lock.unlock() }
        return accepted
    }

    /// How many complete request heads the server has read, answered or not.
    var requestsReceived: Int {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }

    init(_ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            acceptLoop()
            finished.signal()
        }
        thread.start()
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops accepting, shuts every connection down, waits for the server's threads to end and
    /// closes the sockets (only then, so that no thread touches a descriptor number reused since).
    func stop() {
        lock.lock()
        guard !stopped else {
            lock.unlock()
            return
        }
        stopped = true
        shutdown(listenFD, Int32(SHUT_RDWR))
        for fd in held { shutdown(fd, Int32(SHUT_RDWR)) }
        lock.unlock()
        finished.wait()
        connectionThreads.wait()
        lock.lock()
        for fd in held { close(fd) }
        held = []
        lock.unlock()
        close(listenFD)
    }

    deinit { stop() }

    /// Registers a new connection; false (and closed) when the server is stopping.
    private func adopt(_ fd: Int32) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else {
            close(fd)
            return false
        }
        accepted += 1
        held.insert(fd)
        return true
    }

    /// Closes a connection the accepting thread has finished with.
    private func release(_ fd: Int32) {
        lock.lock()
        defer { lock.unlock() }
        shutdown(fd, Int32(SHUT_RDWR))
        if held.remove(fd) != nil { close(fd) }
    }

    private func acceptLoop() {
        while true {
            guard let client = try? retryingOnInterrupt({ accept(listenFD, nil, nil) }) else { return }
            guard adopt(client) else { return }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var on: Int32 = 1  // pieces leave at once, not when the previous one is acknowledged
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            switch behaviour {
            case .silent:
                continue
            case .rawThenStall(let bytes):
                _ = readRequest(client)
                sendAll(client, bytes)
                continue
            case .persistent(let head):
                onOwnThread(client) { [self] in
                    while true {
                        let request = readRequest(client)
                        guard headEnd(request) != nil else { break }
                        guard sendAll(client, Array((head + "Content-Length: \(request.count)\r\n\r\n").utf8) + request) else { break }
                    }
                }
                continue
            case .persistentRaw(let reply):
                onOwnThread(client) { [self] in
                    while headEnd(readRequest(client)) != nil, sendAll(client, reply) {}
                }
                continue
            case .keepAliveThenClose(let readsNextRequest):
                onOwnThread(client) { [self] in
                    let request = readRequest(client)
                    guard headEnd(request) != nil else { return }
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(request.count)\r\n\r\n"
                    guard sendAll(client, Array(head.utf8) + request) else { return }
                    if readsNextRequest { _ = readRequest(client) }
                }
                continue
            case .echo:
                let request = readRequest(client)
                let status = statusCode(in: request)
                var head = "HTTP/1.1 \(status) Test\r\nContent-Type: text/plain\r\n"
                head += "X-Repeated: one\r\nX-Repeated: two\r\n"
                head += "Content-Length: \(request.count)\r\nConnection: close\r\n\r\n"
                sendAll(client, Array(head.utf8) + request)
            case .huge(let bytes, let framing):
                _ = readRequest(client)
                sendAll(client, Array(Self.hugeHead(bytes: bytes, framing: framing).utf8))
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
                var sent = 0
                while sent < bytes {
                    let piece = Array(chunk.prefix(bytes - sent))
                    let framed = framing == .chunked
                        ? Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10] : piece
                    guard sendAll(client, framed) else { break }
                    sent += piece.count
                }
                if sent == bytes, framing == .chunked { sendAll(client, Array("0\r\n\r\n".utf8)) }
                lock.lock()
                hugeBytesSent += sent
                lock.unlock()
            case .raw(let bytes, let readFirst):
                if readFirst { _ = readRequest(client) }
                sendAll(client, bytes)
            case .rawInPieces(let pieces, let pause):
                _ = readRequest(client)
                for (index, piece) in pieces.enumerated() {
                    if index > 0 { usleep(pause) }
                    guard sendAll(client, piece) else { break }
                }
            }
            release(client)
        }
    }

    /// The head a `.huge` server sends before the body.
    static func hugeHead(bytes: Int, framing: BodyFraming) -> String {
        var head = "HTTP/1.1 200 OK\r\nConnection: close\r\n"
        switch framing {
        case .length: head += "Content-Length: \(bytes)\r\n"
        case .chunked: head += "Transfer-Encoding: chunked\r\n"
        case .untilClose: break
        }
        return head + "\r\n"
    }

    /// Serves `client` on a thread of its own, which shuts the connection down when `body`
    /// returns; stop() waits for it and closes the socket.
    private func onOwnThread(_ client: Int32, _ body: @escaping @Sendable () -> Void) {
        connectionThreads.enter()
        Thread { [self] in
            body()
            shutdown(client, Int32(SHUT_RDWR))
            connectionThreads.leave()
        }.start()
    }

    /// Reads the head and, if it announces one, the body.
    private func readRequest(_ fd: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let end = headEnd(data) {
                let head = String(decoding: data[..<end], as: UTF8.self).lowercased()
                var expected = 0
                for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                    expected = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
                if data.count >= end + 4 + expected {
                    lock.lock()
                    requests += 1
                    lock.unlock()
                    return data
                }
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    private func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 0...(data.count - 4)
        where data[index] == 13 && data[index + 1] == 10 && data[index + 2] == 13 && data[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func statusCode(in request: [UInt8]) -> Int {
        let firstLine = String(decoding: request.prefix(while: { $0 != 13 }), as: UTF8.self)
        let parts = firstLine.split(separator: " ")
        guard parts.count >= 2, parts[1].hasPrefix("/status/"), let code = Int(parts[1].dropFirst(8).prefix(3)) else {
            return 200
        }
        return code
    }

    /// MSG_NOSIGNAL: a client that hangs up must not SIGPIPE the test process.
    @discardableResult
    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }
}

/// The servers one test started, stopped together by its tearDown.
final class TestServers {
    private var servers: [TestHTTPServer] = []

    func start(_ behaviour: TestHTTPServer.Behaviour) throws -> TestHTTPServer {
        let server = try TestHTTPServer(behaviour)
        servers.append(server)
        return server
    }

    func stopAll() {
        for server in servers { server.stop() }
        servers = []
    }
}

/// A 127.0.0.1 port whose listen queue is full and never drained: the kernel drops further
/// connection attempts (no reply at all, as from a host behind a dropping firewall), so a
/// client's connect can only time out.
final class FullBacklogListener {
    let port: UInt16
    private var sockets: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EIO) }
        sockets.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        // Backlog 0 holds one established connection; this one fills it.
        guard bound == 0, listen(listener, 0) == 0 else {
            stop()
            throw POSIXError(.EADDRINUSE)
        }
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        sockets.append(filler)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            stop()
            throw POSIXError(.ECONNREFUSED)
        }
        usleep(50_000)  // the handshake's last ACK has put it in the accept queue
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func stop() {
        for fd in sockets { close(fd) }
        sockets = []
    }

    deinit { stop() }
}

/// A 127.0.0.1 port nothing listens on: bound to reserve a number, then closed.
func unusedLocalPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return UInt16(bigEndian: address.sin_port)
}

/// Whether something accepts TCP connections on 127.0.0.1:`port` (a test server is ready).
func localPortAcceptsConnections(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}
