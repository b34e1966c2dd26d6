import Foundation
import MPinServer
import MPinWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What a client nobody knows can make the server do (docs/SECURITY.md §5): every test
/// speaks raw TCP to 127.0.0.1 without credentials.
final class AnonymousClientTests: XCTestCase {
    /// A TestServer started with `adjust`, always shut down after `body`.
    private func withServer(_ adjust: (inout ServerConfig) -> Void = { _ in },
                            _ body: (TestServer) async throws -> Void) async throws {
        let server = try TestServer(adjust: adjust)
        do {
            try await server.start()
            try await body(server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    // MARK: Deadlines and the connection cap

    /// A connection that sends nothing, one that sends its head a line now and then, one that
    /// sends its body a byte now and then, and a kept-alive one after its answer: each closed by
    /// the server within its deadline (1 s here), each counted in /metrics.
    func testIdleSlowHeaderAndSlowBodyConnectionsAreClosed() async throws {
        try await withServer({ config in
            config.headerTimeoutSeconds = 1; config.bodyTimeoutSeconds = 1; config.idleTimeoutSeconds = 1
        }) { server in
            let port = server.running!.port

            let idle = try RawSocket(port: port)
            XCTAssertTrue(idle.isClosed(within: 4), "a connection that sends nothing stays open")

            let slowHead = try RawSocket(port: port)
            slowHead.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            XCTAssertTrue(slowHead.isClosed(within: 4, trickle: "X-Slow: 1\r\n"), "a head sent a line at a time stays open")

            let slowBody = try RawSocket(port: port)
            slowBody.send("PUT /rps/user HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{")
            XCTAssertTrue(slowBody.isClosed(within: 4, trickle: " "), "a body sent a byte at a time stays open")

            let kept = try RawSocket(port: port)
            kept.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            XCTAssertTrue(kept.isClosed(within: 4), "a kept-alive connection stays open when idle")
            XCTAssertTrue(String(decoding: kept.received, as: UTF8.self).hasPrefix("HTTP/1.1 200"))

            // A body refused (413) before it has all arrived, then nothing: idle, not busy for ever.
            let refused = try RawSocket(port: port)
            refused.send("PUT /rps/user HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 70000\r\n\r\n"
                         + String(repeating: " ", count: 70_000))
            XCTAssertTrue(refused.isClosed(within: 4), "a connection answered 413 stays open")
            XCTAssertTrue(String(decoding: refused.received, as: UTF8.self).hasPrefix("HTTP/1.1 413"))

            let metrics = String(decoding: try await server.client.get("/metrics").body, as: UTF8.self)
            for reason in ["header_timeout", "body_timeout", "idle_timeout"] {
                XCTAssertTrue(metrics.contains("mpin_connections_closed_total{reason=\"\(reason)\"} "), reason)
                XCTAssertFalse(metrics.contains("mpin_connections_closed_total{reason=\"\(reason)\"} 0\n"), reason)
            }
        }
    }

    /// `mpin-server serve` with 1,024 descriptors (soft and hard, set in its shell), 2,000
    /// connections that send half a head and wait: a login still succeeds, promptly; the server
    /// logs that it reached its cap and counts the connections it closed for the new ones.
    func testLoginsWorkWhileTwoThousandSlowConnectionsAreOpen() async throws {
        let wanted = 2_000
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let own = min(limit.rlim_max, rlim_t(wanted + 1_024))
        guard own >= rlim_t(wanted + 256) else { throw XCTSkip("this process may open only \(limit.rlim_max) descriptors") }
        let previous = limit.rlim_cur
        limit.rlim_cur = max(limit.rlim_cur, own)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        defer { limit.rlim_cur = previous; setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) }

        let dir = NSTemporaryDirectory() + "mpin-slow-" + UUID().uuidString
        try DataDirectory.initialise(path: dir, autoActivate: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let child = try ServeProcess(dataDirectory: dir, descriptorLimit: 1_024)
        defer { child.stop() }
        let http = HTTPClient(base: "http://127.0.0.1:\(child.port)", timeout: 10)
        var client = MPinTestClient(http: http)
        try await client.registerFully("alice@example.com", pin: "1234")

        var slow: [RawSocket] = []
        defer { slow.forEach { $0.close() } }
        for _ in 0..<wanted { slow.append(try RawSocket(port: child.port, blocking: false)) }
        // Half a head each, once connected (a connection still in the backlog takes it later).
        let until = Date().addingTimeInterval(5)
        var pending = slow
        while !pending.isEmpty, Date() < until {
            pending = pending.filter { !$0.sendWhenWritable("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") }
            if !pending.isEmpty { usleep(20_000) }
        }

        let start = Date()
        let status = try await client.authenticate(pin: "1234")
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(status, 200)
        XCTAssertLessThan(elapsed, 3, "a login took \(elapsed) s beside \(wanted) slow connections")
        print("AnonymousClientTests: a login beside \(wanted) slow connections at 1,024 descriptors took \(Int(elapsed * 1000)) ms")

        let metrics = String(decoding: try await http.get("/metrics").body, as: UTF8.self)
        let evicted = metrics.split(separator: "\n").first { $0.hasPrefix("mpin_connections_closed_total{reason=\"evicted\"}") }
        XCTAssertNotNil(evicted)
        XCTAssertGreaterThan(Double(evicted?.split(separator: " ").last ?? "0") ?? 0, 0)
        XCTAssertTrue(child.log.contains("connection limit reached"), "no log line at the cap")
    }

    // MARK: HTTP/1.0, Expect: 100-continue, duplicate keys

    func testHTTP10WithoutKeepAliveIsAnsweredAndClosed() async throws {
        try await withServer { server in
            let s = try RawSocket(port: server.running!.port)
            s.send("GET /health HTTP/1.0\r\n\r\n")
            XCTAssertTrue(s.isClosed(within: 3), "an HTTP/1.0 request without keep-alive leaves its connection open")
            XCTAssertTrue(String(decoding: s.received, as: UTF8.self).contains(" 200 OK"))
        }
    }

    func testExpect100ContinueGetsContinueBeforeTheBody() async throws {
        try await withServer { server in
            let body = #"{"userId":"carol@example.com","mobile":1}"#
            let s = try RawSocket(port: server.running!.port)
            s.send("PUT /rps/user HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   + "Content-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
            XCTAssertTrue(s.waitFor("\r\n\r\n", within: 3), "no 100 Continue")
            XCTAssertTrue(String(decoding: s.received, as: UTF8.self).hasPrefix("HTTP/1.1 100 Continue\r\n"))
            s.send(body)
            XCTAssertTrue(s.isClosed(within: 5))
            XCTAssertTrue(String(decoding: s.received, as: UTF8.self).contains("HTTP/1.1 200 OK"))
        }
    }

    func testAMemberNamedTwiceIsRefused() async throws {
        try await withServer { server in
            let r = try await server.client.send("PUT", "/rps/user",
                                                 body: Data(#"{"userId":"bob@example.com","mobile":1,"userId":"eve@example.com"}"#.utf8))
            XCTAssertEqual(r.status, 400, String(decoding: r.body, as: UTF8.self))
            let users = try await server.admin().list().map(\.userId)
            XCTAssertFalse(users.contains("bob@example.com")); XCTAssertFalse(users.contains("eve@example.com"))
        }
    }

    // MARK: Control characters in identities and names

    func testControlCharactersInIdentitiesAndNamesAreRefused() async throws {
        try await withServer { server in
            for body in [#"{"userId":"alice@example.com\u0000attacker","mobile":1}"#,
                         #"{"userId":"alice@example.com\nX-Forged: 1","mobile":1}"#,
                         #"{"userId":"alice@example.com\u0085","mobile":1}"#,
                         #"{"userId":"dave@example.com","mobile":1,"deviceName":"phone\u0007"}"#] {
                let r = try await server.client.send("PUT", "/rps/user", body: Data(body.utf8))
                XCTAssertEqual(r.status, 400, body)
                XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("Control character in"), body)
            }
            let users = try await server.admin().list().map(\.userId)
            XCTAssertFalse(users.contains { $0.hasPrefix("alice@example.com") || $0.hasPrefix("dave@") }, "\(users)")
            // Neither is a tab or a non-ASCII letter anywhere else refused.
            let ok = try await server.client.send("PUT", "/rps/user", body: Data(#"{"userId":"zoë@example.com","mobile":1}"#.utf8))
            XCTAssertEqual(ok.status, 200)
        }
    }

    // MARK: The issuer, CORS, /metrics, plain HTTP

    func testTheIssuerComesFromTheConfigurationNotTheHostHeader() async throws {
        try await withServer { server in
            let port = server.running!.port
            let s = try RawSocket(port: port)
            s.send("GET /.well-known/openid-configuration HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
            XCTAssertTrue(s.isClosed(within: 5))
            let text = String(decoding: s.received, as: UTF8.self)
            XCTAssertTrue(text.contains(#""issuer":"http://127.0.0.1:\#(port)""#), text)
            XCTAssertFalse(text.contains("evil.example"), text)
        }
    }

    func testNoResponseCombinesAnyOriginWithCredentials() async throws {
        try await withServer { server in
            for (method, path) in [("GET", "/rps/clientSettings"), ("OPTIONS", "/rps/user"), ("POST", "/oidc/token"),
                                   ("GET", "/oidc/userinfo"), ("PUT", "/rps/user"), ("GET", "/nowhere")] {
                let r = try RawHTTP.send("http://127.0.0.1:\(server.running!.port)", method, path)
                XCTAssertNil(r.headers["access-control-allow-credentials"], "\(method) \(path)")
            }
            let settings = try RawHTTP.send("http://127.0.0.1:\(server.running!.port)", "GET", "/rps/clientSettings")
            XCTAssertEqual(settings.headers["access-control-allow-origin"], "*", "the browser SDK's flow keeps CORS")
            let token = try RawHTTP.send("http://127.0.0.1:\(server.running!.port)", "POST", "/oidc/token")
            XCTAssertNil(token.headers["access-control-allow-origin"], "the token endpoint is for relying parties' servers")
        }
    }

    /// On every address, plain HTTP needs `allowPlainHTTP`; `/metrics` answers a loopback peer,
    /// and another only with the bearer token of DIR/metrics.token; without publicBaseURL, the
    /// OpenID discovery has no issuer to give.
    func testMetricsAndPlainHTTPOnANetworkAddress() async throws {
        guard let address = Self.nonLoopbackIPv4() else { throw XCTSkip("no network address on this host") }
        let plain = try TestServer()
        defer { try? FileManager.default.removeItem(atPath: plain.dataDir) }
        do {
            _ = try await MPinServer(dataDirectory: plain.dataDir, host: "0.0.0.0", port: 0, logger: TestServer.quietLogger)
            XCTFail("plain HTTP on 0.0.0.0 without allowPlainHTTP")
        } catch let e as SetupError {
            XCTAssertEqual(e, .plainHTTPOnNetwork("0.0.0.0"))
        }
        let allowed = try TestServer { $0.allowPlainHTTP = true }
        defer { try? FileManager.default.removeItem(atPath: allowed.dataDir) }
        let token = "metrics-" + UUID().uuidString
        XCTAssertTrue(FileManager.default.createFile(atPath: allowed.dataDir + "/metrics.token", contents: Data(token.utf8),
                                                     attributes: [.posixPermissions: 0o600]))
        let mpin = try await MPinServer(dataDirectory: allowed.dataDir, host: "0.0.0.0", port: 0, logger: TestServer.quietLogger)
        let running = try await mpin.start()
        do {
            let remote = HTTPClient(base: "http://\(address):\(running.port)")
            let local = HTTPClient(base: "http://127.0.0.1:\(running.port)")
            let refused = try await remote.get("/metrics").status
            let wrongToken = try await remote.send("GET", "/metrics", headers: ["Authorization": "Bearer " + String(token.reversed())]).status
            let withToken = try await remote.send("GET", "/metrics", headers: ["Authorization": "Bearer " + token]).status
            let fromLoopback = try await local.get("/metrics").status
            XCTAssertEqual(refused, 404); XCTAssertEqual(wrongToken, 404)
            XCTAssertEqual(withToken, 200); XCTAssertEqual(fromLoopback, 200)
            let discovery = try await remote.get("/.well-known/openid-configuration")
            XCTAssertEqual(discovery.status, 503, String(decoding: discovery.body, as: UTF8.self))
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    // MARK: Access-number look-ups from many addresses

    /// 30 source addresses of 127.0.0.0/8, each under its own limit (30 a minute): at most ten
    /// look-ups of one number, and at most 300 look-ups overall, whatever the addresses.
    func testAccessNumberLookupsCannotBeMultipliedByAddresses() async throws {
        try await withServer { server in
            let port = server.running!.port
            let issued = try await server.client.send("POST", "/rps/getAccessNumber").decode(AccessNumberResponse.self)
            var sameNumber = 0
            for host in 2...31 {
                if try RawSocket.get(port: port, from: "127.0.0.\(host)", "/rps/accessnumber/\(issued.accessNumber)") != 429 {
                    sameNumber += 1
                }
            }
            XCTAssertLessThanOrEqual(sameNumber, 10, "one number read from 30 addresses")
            var body = 100_000
            var admitted = 0
            for host in 32...61 {
                for _ in 0..<20 {
                    var number: String? = nil
                    while number == nil { body += 1; number = AccessNumber.issue(body: body) }
                    if try RawSocket.get(port: port, from: "127.0.0.\(host)", "/rps/accessnumber/\(number!)") != 429 { admitted += 1 }
                }
            }
            XCTAssertLessThanOrEqual(admitted, 300, "600 look-ups from 30 addresses")
            XCTAssertGreaterThan(admitted, 0)
        }
    }

    static func nonLoopbackIPv4() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>? = nil
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var p = list
        while let entry = p {
            defer { p = entry.pointee.ifa_next }
            guard let a = entry.pointee.ifa_addr, a.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            a.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var addr = sin.pointee.sin_addr
                _ = inet_ntop(AF_INET, &addr, &text, socklen_t(INET_ADDRSTRLEN))
            }
            let s = String(cString: text)
            if !s.hasPrefix("127.") { return s }
        }
        return nil
    }
}

/// A TCP connection to 127.0.0.1 that the test drives byte by byte.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    private(set) var received: [UInt8] = []
    private var closed = false

    struct Failure: Error { let what: String }

    init(port: Int, blocking: Bool = true, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(what: "socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { Glibc.close(fd); throw Failure(what: "bind \(source): errno \(errno)") }
        }
        if !blocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 || (!blocking && errno == EINPROGRESS) else {
            Glibc.close(fd)
            throw Failure(what: "connect: errno \(errno)")
        }
    }

    deinit { close() }

    func close() {
        if !closed { Glibc.close(fd); closed = true }
    }

    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Sends `text` if the connection is established by now (non-blocking sockets); true once sent.
    func sendWhenWritable(_ text: String) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&p, 1, 0) == 1 else { return false }
        send(text)
        return true
    }

    /// Reads what is there for up to `milliseconds`; false once the peer has closed or reset.
    private func pump(_ milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) == 1 else { return true }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n > 0 { received += buffer[0..<n]; return true }
        if n < 0, errno == EAGAIN || errno == EINTR { return true }
        return false
    }

    /// Whether the server closes the connection within `seconds`, reading what it sends and
    /// sending `trickle` every quarter of a second meanwhile.
    func isClosed(within seconds: Double, trickle: String? = nil) -> Bool {
        let until = Date().addingTimeInterval(seconds)
        var nextTrickle = Date().addingTimeInterval(0.25)
        while Date() < until {
            if !pump(50) { return true }
            if let trickle, Date() >= nextTrickle {
                if !send(trickle) { return true }
                nextTrickle = Date().addingTimeInterval(0.25)
            }
        }
        return false
    }

    /// Whether `marker` arrives within `seconds`.
    func waitFor(_ marker: String, within seconds: Double) -> Bool {
        let until = Date().addingTimeInterval(seconds)
        while Date() < until {
            if String(decoding: received, as: UTF8.self).contains(marker) { return true }
            if !pump(50) { break }
        }
        return String(decoding: received, as: UTF8.self).contains(marker)
    }

    /// One GET from the source address `from`; the status, 0 when there was no answer.
    static func get(port: Int, from source: String, _ path: String) throws -> Int {
        let s = try RawSocket(port: port, from: source)
        defer { s.close() }
        s.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        _ = s.isClosed(within: 5)
        let line = String(decoding: s.received.prefix(32), as: UTF8.self)
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }
}

/// `mpin-server serve` in a shell that first sets the descriptor limit (soft and hard), on a
/// port it picks; its standard error kept. Always stopped by `stop()`.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let logBox = NSLock()
    private var logged = ""

    var log: String { logBox.lock(); defer { logBox.unlock() }; return logged }

    init(dataDirectory: String, descriptorLimit: Int) throws {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        guard let binary = [dir, dir.deletingLastPathComponent()].map({ $0.appendingPathComponent("mpin-server").path })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw RawSocket.Failure(what: "mpin-server binary not next to the test bundle")
        }
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" serve --data \"$1\" --host 127.0.0.1 --port 0",
                             binary, dataDirectory]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let handle = err.fileHandleForReading
        var text = ""
        var found: Int? = nil
        while found == nil {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.contains("mpin-server ready") }),
               let r = line.range(of: "http://127.0.0.1:") {
                found = Int(line[r.upperBound...].prefix { $0.isNumber })
            }
        }
        logged = text
        guard let found else {
            process.terminate(); process.waitUntilExit()
            throw RawSocket.Failure(what: "no ready line: \(text)")
        }
        port = found
        handle.readabilityHandler = { [weak self] h in
            let chunk = h.availableData
            guard let self, !chunk.isEmpty else { return }
            self.logBox.lock(); self.logged += String(decoding: chunk, as: UTF8.self); self.logBox.unlock()
        }
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let until = Date().addingTimeInterval(10)
        while process.isRunning, Date() < until { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}
