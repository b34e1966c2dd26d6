// A tiny HTTP/1.1 server for the transport tests: POSIX sockets, 127.0.0.1 only, a port the
// kernel picks, one thread, stopped (and joined) by the test.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

final class TestHTTPServer: @unchecked Sendable {
    enum Behaviour {
        /// Replies with the raw request as the body; `/status/NNN` picks the status code.
        case echo
        /// Accepts connections and never answers.
        case silent
        /// Replies 200 with `bytes` bytes of body, with or without a Content-Length.
        case huge(bytes: Int, declareLength: Bool)
        /// Reads the request (unless `readFirst` is false), sends these bytes and closes.
        case raw([UInt8], readFirst: Bool = true)
        /// As `echo`, but keeps each connection open for further requests (a thread per
        /// connection); `acceptedConnections` counts the connections.
        case keepAliveEcho
    }

    let port: UInt16
    private let behaviour: Behaviour
    private let listenFD: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stopped = false
    private var held: [Int32] = []
    private var accepted = 0
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

    /// Stops accepting, closes every connection and waits for the server thread to end.
    func stop() {
        lock.lock()
        let alreadyStopped = stopped
        stopped = true
        let connections = held
        held = []
        lock.unlock()
        guard !alreadyStopped else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
        finished.wait()
        close(listenFD)
    }

    deinit { stop() }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            lock.lock()
            accepted += 1
            lock.unlock()
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            switch behaviour {
            case .silent:
                lock.lock()
                held.append(client)
                lock.unlock()
                continue
            case .keepAliveEcho:
                lock.lock()
                held.append(client)
                lock.unlock()
                Thread { [self] in
                    while true {
                        let request = readRequest(client)
                        guard headEnd(request) != nil else { break }
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(request.count)\r\n\r\n"
                        guard sendAll(client, Array(head.utf8) + request) else { break }
                    }
                    shutdown(client, Int32(SHUT_RDWR))
                }.start()
                continue
            case .echo:
                let request = readRequest(client)
                let status = statusCode(in: request)
                var head = "HTTP/1.1 \(status) Test\r\nContent-Type: text/plain\r\n"
                head += "X-Repeated: one\r\nX-Repeated: two\r\n"
                head += "Content-Length: \(request.count)\r\nConnection: close\r\n\r\n"
                sendAll(client, Array(head.utf8) + request)
            case .huge(let bytes, let declareLength):
                _ = readRequest(client)
                var head = "HTTP/1.1 200 OK\r\nConnection: close\r\n"
                if declareLength { head += "Content-Length: \(bytes)\r\n" }
                sendAll(client, Array((head + "\r\n").utf8))
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
                var sent = 0
                while sent < bytes, sendAll(client, Array(chunk.prefix(bytes - sent))) { sent += min(chunk.count, bytes - sent) }
                lock.lock()
                hugeBytesSent += sent
                lock.unlock()
            case .raw(let bytes, let readFirst):
                if readFirst { _ = readRequest(client) }
                sendAll(client, bytes)
            }
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        }
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
                if data.count >= end + 4 + expected { return data }
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
