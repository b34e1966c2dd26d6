import Foundation
import MPinClient
import MPinLinux
import XCTest

/// Runs `body` and returns the transport error it throws, failing the test if it returns.
func transportError(_ body: () throws -> HTTPResponse,
                    file: StaticString = #filePath, line: UInt = #line) -> HTTPTransportError? {
    do {
        let response = try body()
        XCTFail("expected an error, got status \(response.status)", file: file, line: line)
        return nil
    } catch let error as HTTPTransportError {
        return error
    } catch {
        XCTFail("expected an HTTPTransportError, got \(error)", file: file, line: line)
        return nil
    }
}

final class CurlHTTPTransportTests: XCTestCase {
    private var servers: [TestHTTPServer] = []

    override func tearDown() {
        for server in servers { server.stop() }
        servers = []
        super.tearDown()
    }

    private func start(_ behaviour: TestHTTPServer.Behaviour) throws -> TestHTTPServer {
        let server = try TestHTTPServer(behaviour)
        servers.append(server)
        return server
    }

    func testGetSendsHeadersAndUserAgentAndReturnsResponse() throws {
        let server = try start(.echo)
        let transport = CurlHTTPTransport()
        let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/rps/clientSettings?a=1",
                                                      headers: ["X-MIRACL-OS-Class": "linux", "X-Empty": ""]))
        XCTAssertEqual(response.status, 200)
        let request = response.text
        XCTAssertTrue(request.hasPrefix("GET /rps/clientSettings?a=1 HTTP/1.1\r\n"), request)
        XCTAssertTrue(request.contains("\r\nUser-Agent: mpin-pam/0.1\r\n"), request)
        XCTAssertTrue(request.contains("\r\nX-MIRACL-OS-Class: linux\r\n"), request)
        XCTAssertTrue(request.contains("\r\nX-Empty:"), request)
        XCTAssertFalse(request.lowercased().contains("content-length"), request)
        XCTAssertEqual(response.header("Content-Type"), "text/plain")
        XCTAssertEqual(response.headers["content-type"], "text/plain")
        XCTAssertEqual(response.header("x-repeated"), "one, two")
    }

    func testPostSendsBodyWithoutCurlDefaults() throws {
        let server = try start(.echo)
        let body = String(repeating: "{\"pass\": 1}", count: 300)  // over 1 KiB: curl would add Expect
        let response = try CurlHTTPTransport().send(HTTPRequest(
            method: .post, url: server.baseURL + "/rps/pass1",
            headers: ["Content-Type": "application/json; charset=UTF-8", "Accept": "text/plain"], text: body))
        XCTAssertEqual(response.status, 200)
        let request = response.text
        XCTAssertTrue(request.hasPrefix("POST /rps/pass1 HTTP/1.1\r\n"), request)
        XCTAssertTrue(request.contains("\r\nContent-Type: application/json; charset=UTF-8\r\n"))
        XCTAssertTrue(request.contains("\r\nAccept: text/plain\r\n"))
        XCTAssertTrue(request.contains("\r\nContent-Length: \(body.utf8.count)\r\n"))
        XCTAssertFalse(request.contains("Expect:"), "no 100-continue round trip")
        XCTAssertTrue(request.hasSuffix("\r\n\r\n" + body))

        // Without a Content-Type the body must not be labelled a form.
        let bare = try CurlHTTPTransport().send(HTTPRequest(method: .post, url: server.baseURL + "/x", text: "{}"))
        XCTAssertFalse(bare.text.contains("x-www-form-urlencoded"), bare.text)
        XCTAssertTrue(bare.text.hasSuffix("\r\n\r\n{}"))
    }

    func testOtherMethods() throws {
        let server = try start(.echo)
        let transport = CurlHTTPTransport()
        let put = try transport.send(HTTPRequest(method: .put, url: server.baseURL + "/rps/user", text: "{\"userId\":\"a\"}"))
        XCTAssertTrue(put.text.hasPrefix("PUT /rps/user HTTP/1.1\r\n"))
        XCTAssertTrue(put.text.hasSuffix("{\"userId\":\"a\"}"))
        let emptyPost = try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/rps/getAccessNumber"))
        XCTAssertTrue(emptyPost.text.hasPrefix("POST /rps/getAccessNumber HTTP/1.1\r\n"))
        XCTAssertTrue(emptyPost.text.contains("\r\nContent-Length: 0\r\n"))
        for method in [HTTPMethod.delete, .options, .patch] {
            let response = try transport.send(HTTPRequest(method: method, url: server.baseURL + "/m"))
            XCTAssertTrue(response.text.hasPrefix("\(method.rawValue) /m HTTP/1.1\r\n"), response.text)
        }
    }

    func testStatusCodesArePassedThrough() throws {
        let server = try start(.echo)
        let transport = CurlHTTPTransport()
        for status in [201, 400, 401, 403, 404, 406, 408, 410, 412, 500, 503] {
            let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/status/\(status)"))
            XCTAssertEqual(response.status, status)
        }
    }

    func testConnectionRefusedIsQuickAndKeepsSecretsOut() {
        let port = unusedLocalPort()
        let started = Date()
        let error = transportError {
            try CurlHTTPTransport().send(HTTPRequest(method: .get,
                                                     url: "http://127.0.0.1:\(port)/rps/signature/abcd?regOTT=SECRET0TT"))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 2)
        XCTAssertEqual(error, .connectionRefused(host: "http://127.0.0.1:\(port)"))
        XCTAssertFalse(String(describing: error).contains("SECRET0TT"))
        XCTAssertFalse(String(describing: error).contains("signature"))
    }

    func testSilentServerTimesOutWithinTheConfiguredTime() throws {
        let server = try start(.silent)
        let transport = CurlHTTPTransport(configuration: .init(timeout: .milliseconds(800)))
        let started = Date()
        let error = transportError { try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/pass1")) }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(error, .timedOut(host: server.baseURL, seconds: 0.8))
        XCTAssertGreaterThanOrEqual(elapsed, 0.75)
        XCTAssertLessThan(elapsed, 2.0)
    }

    func testRequestTimeoutOverridesTheDefault() throws {
        let server = try start(.silent)
        let started = Date()
        let error = transportError {
            try CurlHTTPTransport().send(HTTPRequest(method: .post, url: server.baseURL + "/pass2", text: "{}",
                                                     timeout: .milliseconds(500)))
        }
        XCTAssertEqual(error, .timedOut(host: server.baseURL, seconds: 0.5))
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(elapsed, 0.45, "the request's own timeout, not an earlier failure")
        XCTAssertLessThan(elapsed, 1.5)
    }

    func testHugeBodyWithLengthIsRefused() throws {
        let server = try start(.huge(bytes: 8 << 20, declareLength: true))
        let transport = CurlHTTPTransport(configuration: .init(maxResponseBytes: 64 * 1024))
        let error = transportError { try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/")) }
        XCTAssertEqual(error, .responseTooLarge(limit: 64 * 1024))
    }

    func testHugeBodyWithoutLengthIsAbortedMidTransfer() throws {
        let total = 64 << 20
        let server = try start(.huge(bytes: total, declareLength: false))
        let transport = CurlHTTPTransport(configuration: .init(maxResponseBytes: 64 * 1024))
        let error = transportError { try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/")) }
        XCTAssertEqual(error, .responseTooLarge(limit: 64 * 1024))
        // The client hung up long before the end: the server could not send the whole body
        // (socket buffers hold a few MiB at most).
        server.stop()
        XCTAssertLessThan(server.bodyBytesSent, total)
    }

    func testBodyAtTheLimitIsAccepted() throws {
        let server = try start(.huge(bytes: 10_000, declareLength: true))
        let response = try CurlHTTPTransport(configuration: .init(maxResponseBytes: 11_000))
            .send(HTTPRequest(method: .get, url: server.baseURL + "/"))
        XCTAssertEqual(response.body.count, 10_000)
    }

    func testHTTPSToAPlainServerIsATLSFailure() throws {
        let server = try start(.raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8), readFirst: false))
        let error = transportError {
            try CurlHTTPTransport().send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(server.port)/"))
        }
        guard case .tlsFailure(let host, _) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertEqual(host, "https://127.0.0.1:\(server.port)")
    }

    func testGarbageReplyIsAConnectionFailure() throws {
        let server = try start(.raw(Array("this is not http\r\n\r\n".utf8)))
        let error = transportError { try CurlHTTPTransport().send(HTTPRequest(method: .get, url: server.baseURL + "/")) }
        guard case .connectionFailed = error else { return XCTFail("got \(String(describing: error))") }
    }

    func testEmptyReplyIsAConnectionFailure() throws {
        let server = try start(.raw([]))
        let error = transportError { try CurlHTTPTransport().send(HTTPRequest(method: .get, url: server.baseURL + "/")) }
        guard case .connectionFailed = error else { return XCTFail("got \(String(describing: error))") }
    }

    func testInvalidURLsAreRefusedWithoutQuotingThem() {
        let transport = CurlHTTPTransport()
        for url in ["file:///etc/shadow", "ftp://127.0.0.1/x", "127.0.0.1/x", "http://", "http://:80/",
                    "http://127.0.0.1:99999/", "http://host/a b?regOTT=SECRET0TT", "gopher://x/?regOTT=SECRET0TT", ""] {
            let error = transportError { try transport.send(HTTPRequest(method: .get, url: url)) }
            guard case .invalidURL = error else {
                XCTFail("\(url): got \(String(describing: error))")
                continue
            }
            XCTAssertFalse(String(describing: error).contains("SECRET0TT"))
        }
    }

    func testHeaderInjectionIsRefused() throws {
        let server = try start(.echo)
        let transport = CurlHTTPTransport()
        for headers in [["X-A": "a\r\nX-Injected: 1"], ["X-A": "a\nb"], ["Bad Name": "x"], ["": "x"], ["X:Y": "z"]] {
            let error = transportError {
                try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/", headers: headers))
            }
            guard case .invalidRequest = error else { return XCTFail("\(headers): got \(String(describing: error))") }
        }
    }

    /// Runs `body` with exactly these proxy variables set (every other one unset), restoring the
    /// environment afterwards.
    private func withProxyVariables(_ values: [String: String], _ body: () throws -> Void) rethrows {
        let names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                     "no_proxy", "NO_PROXY"]
        let saved: [(String, String?)] = names.map { name in (name, ProcessInfo.processInfo.environment[name]) }
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        for name in names { unsetenv(name) }
        for (name, value) in values { setenv(name, value, 1) }
        try body()
    }

    func testUnresolvableHost() {
        withProxyVariables([:]) {
            let error = transportError {
                try CurlHTTPTransport(configuration: .init(timeout: .seconds(5)))
                    .send(HTTPRequest(method: .get, url: "http://no-such-host.invalid/"))
            }
            XCTAssertEqual(error, .hostNotFound(host: "http://no-such-host.invalid"))
        }
    }

    func testProxyVariableIsHonoured() throws {
        let proxy = try start(.echo)
        try withProxyVariables(["http_proxy": proxy.baseURL]) {
            let response = try CurlHTTPTransport().send(HTTPRequest(method: .get, url: "http://mfa.example.invalid/rps/x"))
            XCTAssertEqual(response.status, 200)
            XCTAssertTrue(response.text.hasPrefix("GET http://mfa.example.invalid/rps/x HTTP/1.1\r\n"), response.text)
        }
    }

    func testConsecutiveRequestsShareOneConnection() throws {
        let server = try start(.keepAliveEcho)
        let transport = CurlHTTPTransport()
        for index in 0..<3 {
            let response = try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/k\(index)", text: "b\(index)"))
            XCTAssertEqual(response.status, 200)
            XCTAssertTrue(response.text.hasPrefix("POST /k\(index) HTTP/1.1\r\n"), response.text)
            XCTAssertTrue(response.text.hasSuffix("b\(index)"), response.text)
        }
        XCTAssertEqual(server.acceptedConnections, 1)
        // A failed request discards the handle: the next one starts afresh and works.
        XCTAssertNotNil(transportError { try transport.send(HTTPRequest(method: .get, url: "http://127.0.0.1:\(unusedLocalPort())/x")) })
        XCTAssertEqual(try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/after")).status, 200)
        XCTAssertEqual(server.acceptedConnections, 2)
    }

    func testOneConnectionPerRequestWhenReuseIsOff() throws {
        let server = try start(.keepAliveEcho)
        let transport = CurlHTTPTransport(configuration: .init(reusesConnection: false))
        for index in 0..<3 {
            XCTAssertEqual(try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/n\(index)")).status, 200)
        }
        XCTAssertEqual(server.acceptedConnections, 3)
    }

    func testAForkedChildNeverUsesItsParentsConnection() throws {
        let server = try start(.keepAliveEcho)
        try runForkCheck(server.baseURL + "/fork")
        // Parent (1 connection, reused for its second request) and child (its own).
        XCTAssertEqual(server.acceptedConnections, 2)
    }

    func testWorksInAForkedChild() throws {
        let server = try start(.echo)
        try runForkCheck(server.baseURL + "/fork")
    }

    func testMissingLibcurlIsATransportErrorNotACrash() throws {
        let server = try start(.echo)
        try runForkCheck("--without-libcurl", server.baseURL + "/x")
        XCTAssertEqual(server.acceptedConnections, 0)
    }

    private func runForkCheck(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try helperExecutable("mpin-fork-check"))
        process.arguments = arguments
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit)
        XCTAssertEqual(process.terminationStatus, 0, "mpin-fork-check \(arguments.joined(separator: " ")) failed")
    }

    func testConcurrentRequestsFromManyThreads() throws {
        let server = try start(.echo)
        let transport = CurlHTTPTransport()
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let response = try? transport.send(HTTPRequest(method: .post, url: server.baseURL + "/t\(index)", text: "body\(index)"))
            results.record(index, response?.text.hasSuffix("body\(index)") == true && response?.status == 200)
        }
        XCTAssertEqual(results.successes, 8)
    }
}

/// Thread-safe tally for the concurrency test.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var ok: Set<Int> = []
    func record(_ index: Int, _ success: Bool) {
        lock.lock()
        if success { ok.insert(index) }
        lock.unlock()
    }
    var successes: Int {
        lock.lock()
        defer { lock.unlock() }
        return ok.count
    }
}
